"""What each Item of a 10-K holds, as a question asks for it: the SEC titles an analyst names Items by, and what
Regulation S-K requires each Item to disclose, in the question's words and the regulation's own. Read by the
question plan (rag.question) and the retriever's Item priors."""

from __future__ import annotations

from .parse.items import TENK_ITEMS
from .words import HEADCOUNT_NOUNS

# Items an analyst names by their SEC title rather than their number: the words that name each title. The Item a
# title is in each form (Form 10-K's Item 3 is Form 10-Q's Part II Item 1) comes from the SEC's own tables.
ITEM_TITLES = [
    (r"\brisk\s+factors?\b", "Risk Factors"),
    (r"\bunresolved\s+staff\s+comments?\b", "Unresolved Staff Comments"),
    (r"\bcybersecurity\b", "Cybersecurity"),
    (r"\blegal\s+proceedings?\b", "Legal Proceedings"),
    (r"\bmine\s+safety\b", "Mine Safety Disclosures"),
    (r"\bmarket\s+for\s+(?:the\s+)?registrant", dict(TENK_ITEMS)["5"]),
    (r"\bmd&a\b|\bmanagement'?s\s+discussion\b", "Management's Discussion and Analysis of Financial Condition and "
                                                    "Results of Operations"),
    (r"\bquantitative\s+and\s+qualitative\s+disclosures?\b", "Quantitative and Qualitative Disclosures About Market Risk"),
    (r"\bcontrols\s+and\s+procedures\b", "Controls and Procedures"),
    (r"\bunregistered\s+sales?\s+of\s+equity\b", "Unregistered Sales of Equity Securities and Use of Proceeds"),
    (r"\bexecutive\s+compensation\b", "Executive Compensation"),
    (r"\bprincipal\s+account(?:ant|ing)\s+fees\b", "Principal Accountant Fees and Services"),
]
# What Regulation S-K requires each 10-K Item to disclose, as a question asks for it without naming the Item, and
# the regulation's own words for it: an Item's passages are also searched by them, since a filing words its
# disclosure after the rule ("we employed approximately 412,600 associates") more often than after the question
# ("how many employees"). Item 101(c)(2) human capital (the number of persons employed) in Item 1; Item 102 the
# location and character of the principal physical properties in Item 2; Item 201 the approximate number of holders
# of record, and Item 703 what may yet be purchased under the issuer's repurchase plans, in Item 5. Soft: the
# Item's best passage joins the results, it does not filter them, also beside the statements a figure's question
# searches.
_NAME = r"[\w.&'’-]+(?:\s+[\w.&'’-]+){0,4}?"  # a company or segment named inside the question
# What a business does with what it offers, as a question asks it ("what does Acme sell"): Item 101(c)(1)'s
# revenue-generating activities in everyday verbs.
BUSINESS_VERBS = ("sell", "make", "produce", "manufacture", "offer", "provide", "develop", "market", "deliver")
ITEM_CONTENT = [
    (r"\b(?:employees?|employ(?:s|ed)?|headcounts?|workforces?|human\s+capital|staff|personnel|workers)\b|"
     r"\bpeople\s+(?:\w+\s+){0,2}?(?:work|works|worked|working)\b", "1",
     "human capital resources number of persons employed " + " ".join(HEADCOUNT_NOUNS)),
    # Item 101(c)(1): the business done, its products and services, its segments; asked as what the company is,
    # what it sells or makes, or what its segments are and hold. Only when no figure is asked (see rag.question).
    (r"\bwhat\s+(?:kind|type|sort)s?\s+of\s+(?:company|business)\b|\bdescrib\w*\s+(?:(?:its|their|the)\s+)?"
     r"(?:own\s+)?business\b|\bline\s+of\s+business\b|\bbusiness\s+model\b|"
     rf"\b(?:does|do|did)\s+{_NAME}\s+(?:actually\s+|currently\s+|mainly\s+|primarily\s+)?"
     rf"(?:{'|'.join(BUSINESS_VERBS)})\b|"
     # "What does Acme do?", "What business is Acme in?", "What is Acme's business?", "Describe Acme's business".
     rf"\bwhat\s+(?:does|do)\s+{_NAME}\s+(?:actually\s+|really\s+)?do\b(?!\s+(?:to|about|with|for|if|when)\b)|"
     rf"\bwhat\s+(?:line\s+of\s+)?business(?:es)?\s+(?:is|are)\s+{_NAME}\s+in\b|"
     rf"\bwhat\s+(?:is|are)\s+{_NAME}(?:'s|’s|')\s+(?:main\s+|core\s+|primary\s+)?business(?:es)?\s*[?.]?\s*$|"
     rf"\bdescrib\w*\s+{_NAME}(?:'s|’s|')\s+business\b|"
     rf"\b(?:fall|belong|sit)s?\s+(?:under|in|within)\s+{_NAME}\s+segment\b|"
     r"\b(?:reportable|operating|business|product)\s+segments\b|\bsegments\s+(?:does|do|did|make\s+up)\b|"
     r"\borgani[sz]e\w*\s+(?:its\s+|their\s+)?(?:operations|business(?:es)?)\b|\bwhich\s+(?:two\s+|three\s+)?"
     r"businesses\b|\b(?:two|three|four|five)\s+businesses\b", "1",
     "description of the business: revenue-generating activities, principal products and services, product "
     "families, reportable segments"),
    # Item 101(c): how seasonal the business is, told with the business; asked as its busiest or weakest quarter.
    (r"\bseasonal\w*|\b(?:busiest|biggest|strongest|weakest|slowest|largest)\s+(?:\w+\s+)?(?:quarter|season)\b|"
     r"\bwhich\s+(?:fiscal\s+)?quarter\s+(?:is|was|are)\b", "1",
     "seasonality of the business: the quarters of highest and lowest sales"),
    (r"\b(?:properties|facilities|square\s+f(?:ee|oo)t(?:age)?|warehouses?|distribution\s+centers?|"
     r"fulfillment\s+centers?|data\s+centers?|stores|retail\s+units?|headquarters)\b", "2",
     "location and general character of the principal plants and materially important physical properties"),
    (r"\b(?:holders?\s+of\s+record|record\s+holders?|(?:stock|share)(?:holders|owners)\s+of\s+record|"
     r"registered\s+(?:stock|share)?(?:holders|owners)|"
     r"yet\s+be\s+purchased|remaining\s+(?:\w+\s+){0,3}authori[sz](?:ation|ed)|"
     r"(?:available|left|remain\w*)\s+(?:to\s+\w+\s+)?under\s+(?:[\w.&'’-]+\s+){0,4}?(?:repurchase|buyback)\s+"
     r"(?:programs?|plans?|authori[sz]ations?)|"
     # The program itself (Item 703 of Regulation S-K: the plans or programs and the amount they authorise).
     r"(?:repurchase|buyback|capital\s+return)\s+(?:programs?|capacity|authority|authori[sz]ations?))\b", "5",
     "approximate number of holders of record; dollar value of shares that may yet be purchased under the plans "
     "or programs"),
    # Item 103: material pending legal proceedings, and the governmental proceedings, fines and sanctions a filer
    # must describe; asked as lawsuits, fines or investigations without naming the Item.
    (r"\b(?:lawsuits?|litigation|sued|suing|antitrust|class\s+actions?|fined|fines|penalt(?:y|ies)|"
     r"investigations?|court\s+(?:case|ruling|order)s?|cease\s+and\s+desist)\b", "3",
     "legal proceedings: material pending legal proceedings, litigation, governmental investigations, fines and "
     "penalties"),
    # Item 105: the material factors that make an investment speculative or risky; asked as what could hurt the
    # business or what risks it flags, without naming the Item.
    (r"\b(?:risks?|threats?|vulnerab\w+|could\s+(?:hurt|harm|hit|affect|impact|disrupt|weigh\s+on))\b"
     r"(?!\s+factors?\b)", "1A",
     "risk factors: material factors that make an investment in the registrant speculative or risky"),
    # Item 106: cybersecurity risk management, strategy and governance (the board's oversight, management's role).
    (r"\bcyber\s*security\b|\bcyber[\s-]?(?:risks?|threats?|attacks?|incidents?|breach\w*)\b|\bciso\b|"
     r"\binformation\s+security\b", "1C",
     "cybersecurity risk management and strategy, governance: board oversight of risks from cybersecurity threats, "
     "management's role in assessing and managing them"),
    # Item 101(c)(1): competitive conditions in the business, the principal methods of competition.
    (r"\bcompetitors?\b|\bcompetition\b|\bcompet(?:e|es|ing)\s+(?:with|against)\b|\brivals?\b", "1",
     "competition: competitive conditions in the business, principal competitors and methods of competition"),
    # Item 101(c)(1)(iv): the duration and effect of the patents, trademarks, licenses, franchises and concessions
    # held; asked as how the company protects its brands, designs or inventions.
    (r"\b(?:patents?|patented|trademarks?|copyrights?|intellectual\s+property|trade\s+secrets?|brand\s+names?|"
     r"inventions?|logos?)\b", "1",
     "intellectual property: patents, trademarks, copyrights, licenses, franchises; their duration and effect"),
    # Item 101(c)(1)(iii): the sources and availability of raw materials; asked as who makes or supplies what the
    # company sells, or where its parts come from.
    (r"\b(?:raw\s+materials?|suppliers?|supply\s+chain|sourc(?:e|es|ing)\s+(?:of\s+)?(?:its\s+|their\s+)?"
     r"(?:materials?|components?|parts|products|chips)|contract\s+manufactur\w*|(?:who|which\s+\w+)\s+"
     r"(?:makes?|made|manufactures?|builds?|produces?))\b", "1",
     "sources and availability of raw materials and components; manufacturing by the company and by third parties"),
    # Item 101(c)(1)(v)-(vi): the customers and any dependence on one or a few of them; asked as who buys what the
    # company sells. Only when no figure is asked (a figure "from customers" is a statement's line).
    (r"\b(?:who\s+(?:are|is)\s+(?:[\w.&'’-]+\s+){0,3}?(?:customers?|clients?|buyers?)|who\s+buys?|"
     r"(?:kinds?|types?)\s+of\s+(?:customers?|clients?|buyers?)|(?:largest|biggest|major|key|main)\s+"
     r"(?:customers?|clients?)|customer\s+concentration|(?:depend\w*|reli\w+|rely)\s+on\s+(?:a\s+few|one|a\s+"
     r"single|a\s+small\s+number\s+of)\s+customers?)", "1",
     "customers: the markets and types of customers served; dependence on a single customer or a few customers"),
    # Item 305: quantitative and qualitative disclosures about market risk (interest rate and foreign currency
    # exchange risk, with the effect of a hypothetical change).
    (r"\bmarket\s+risks?\b|\binterest\s+rate\s+(?:risk|sensitivity|exposure)|\b(?:foreign\s+(?:currency|exchange)|"
     r"fx|currency)\s+(?:risk|exposure|sensitivity)\b|\bhypothetical\b|\bsensitivity\s+analysis\b|"
     r"\b(?:rise|increase|change|move|drop|decline)\s+in\s+interest\s+rates\b", "7A",
     "quantitative and qualitative disclosures about market risk: interest rate risk, foreign currency exchange "
     "risk, the effect of a hypothetical change in rates"),
    # Part III: what the executives are paid (Item 402), who owns the shares (Item 403) and what the auditor is paid
    # (Item 9(e) of Schedule 14A). Stock-based compensation as an expense is a statement figure, not Item 11.
    (r"\b(?:executives?|ceo|cfo|chief\s+\w+\s+officer|named\s+executive\s+officers?|officers?|directors?)(?:'s?|’s?)?"
     r"\s+(?:total\s+|annual\s+)?(?:compensation|pay|salar(?:y|ies)|bonus(?:es)?|remuneration)\b|"
     r"\bpay\s+ratio\b|\b(?:total|annual)\s+(?:compensation|pay)\b(?!\s+(?:expense|cost))|"
     r"\bcompensation\s+(?:did|does|was|were)\s+(?:[\w.'’-]+\s+){1,4}?(?:receive|earn|get|paid|awarded)\b|"
     # The executive as what is paid ("how much did it pay its CEO"), or as who earns ("what did the CFO make").
     r"\b(?:pa(?:y|ys|id)|compensated?)\s+(?:its\s+|their\s+|the\s+|our\s+)?(?:ceo|cfo|chief\s+\w+\s+officer|"
     r"executives?|named\s+executive\s+officers?)\b|"
     r"\b(?:ceo|cfo|chief\s+\w+\s+officer)\s+(?:make|made|earn|earned|receive|received|take\s+home)\b", "11",
     "executive compensation: summary compensation table of the named executive officers"),
    (r"\bbeneficial(?:ly)?\s+own\w*|\bsecurity\s+ownership\b|"
     r"\b(?:largest|biggest|major|principal)\s+(?:share|stock)?(?:holders?|owners?)\b", "12",
     "security ownership of certain beneficial owners and management"),
    (r"\b(?:audit|auditor'?s?|accountant'?s?|accounting\s+firm'?s?)\s+fees\b|"
     r"\bfees\s+(?:paid|billed)\s+(?:to|by)\s+(?:its\s+|the\s+)?(?:independent\s+)?(?:auditor|accountant|registered)",
     "14", "principal accountant fees and services"),
]
HEADCOUNT_WORDS = ITEM_CONTENT[0][2]  # human capital and the persons employed, Item 101(c)(2)(ii)
BUSINESS_WORDS = ITEM_CONTENT[1][2]  # the description of the business, Item 101(c)(1)
CUSTOMER_WORDS = next(words for _p, _n, words in ITEM_CONTENT if words.startswith("customers:"))  # 101(c)(1)(v)
# "What is <product>", "What are <product> GPUs": a term the filing introduces, defined where Item 1 describes the
# products and services (Item 101(c)(1)(i), the principal products and services, and new ones); not a company's
# attribute ("What is Acme's ...") nor a company itself.
PRODUCT_WORDS = "principal products produced and services rendered; new products and services introduced"
