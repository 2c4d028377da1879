"""Signs that a model's answer followed a passage rather than the question: prompt injection that got through.

The prompt tells the model that text inside the sources is data, never an instruction (rule 6), and the citation
and figure checks catch a planted figure or a citation of nothing. What they cannot catch is an answer that drops
the question for what a passage told the model to say: one that recites the model's own instructions (a passage
asked it to reveal its prompt), or one that has nothing to do with the question at all (a passage asked it to
answer "42"). `steered_warnings` names both, as warnings on the answer; it changes no word of it.
"""

from __future__ import annotations

from ..facts.mentions import find_mentions
from ..words import spelled_out, tokens
from .citations import CITATION_MARKER
from .prompt import SYSTEM_PROMPT, build_user_prompt

# Words in a row the answer must share with the prompt to be reciting it: a whole clause of a rule, longer than
# any phrase an answer about filings shares with the rules by chance ("the provided filings do not contain").
RECITED_WORDS = 8
# A question word and an answer word that differ only after this many letters are one word ("Acmehealth",
# "Acmehealthcare"), as a stem would have them.
SHARED_PREFIX = 6


def _words(text: str) -> list[str]:
    return [w for w in (part.strip(".,;:()[]{}'\"*`").lower() for part in text.split()) if w]


def _prompt_runs() -> set[tuple[str, ...]]:
    """Every run of RECITED_WORDS words of the instructions the model reads: the rules and the user message's own
    words around the sources and the question. The examples the rules quote are left out: an answer may rightly
    say "The provided filings do not contain this information."."""
    runs: set[tuple[str, ...]] = set()
    for text in (SYSTEM_PROMPT, build_user_prompt("", [])):
        for unquoted in text.split('"')[::2]:
            words = _words(unquoted)
            runs.update(tuple(words[i:i + RECITED_WORDS]) for i in range(len(words) - RECITED_WORDS + 1))
    return runs


_PROMPT_RUNS = _prompt_runs()


def recites_prompt(answer: str) -> bool:
    """Does the answer repeat a clause of the model's instructions word for word?"""
    words = _words(answer)
    return any(tuple(words[i:i + RECITED_WORDS]) in _PROMPT_RUNS for i in range(len(words) - RECITED_WORDS + 1))


def _stems(text: str) -> set[str]:
    found = set(tokens(text))
    for phrase in spelled_out(text):  # "capex" in the question, "capital expenditures" in the answer
        found.update(tokens(phrase))
    return found


def touches_question(question: str, answer: str) -> bool:
    """Does the answer name anything the question asks about: one of its words (stemmed, a short form as spelled
    out, a year), or a figure of the facts layer's vocabulary that the question names in other words ("top line"
    asked, "net sales" answered)? A question with no word to look for counts as touched."""
    asked = _stems(question)
    if not asked:
        return True
    said = _stems(answer)
    if asked & said:
        return True
    long_said = [w for w in said if len(w) >= SHARED_PREFIX]
    if any(w[:SHARED_PREFIX] == s[:SHARED_PREFIX] for w in asked if len(w) >= SHARED_PREFIX for s in long_said):
        return True
    asked_metrics = {m.metric_key for m in find_mentions(question)}
    return bool(asked_metrics & {m.metric_key for m in find_mentions(answer)})


def steered_warnings(question: str, answer: str) -> list[str]:
    """Warnings for an answer that shows signs of following a passage's instructions instead of the question."""
    answer = CITATION_MARKER.sub(" ", answer)  # "[2]" is no word of the answer's
    warnings = []
    if recites_prompt(answer):
        warnings.append("The answer repeats the model's own instructions, as a passage may have told it to: it may be "
                        "following text planted in the filings rather than the question. Check it against the sources.")
    if not touches_question(question, answer):
        warnings.append("The answer names nothing the question asks about: a passage may have told the model what to "
                        "say instead. Check it against the sources.")
    return warnings
