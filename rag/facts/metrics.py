"""The metric vocabulary: analysts' words -> XBRL concepts (ordered: the first concept with a value wins), and
the primary statement that prints each metric."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from .labels import first_sign, other_sign

log = logging.getLogger(__name__)

# ==============================================================================================================
# Metrics: analysts' words -> concepts (ordered: the first concept with a value wins)


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    phrases: tuple[str, ...]
    concepts: tuple[str, ...] = ()
    period: str = "duration"  # duration | instant | cover (a cover-page fact dated after the period end)
    kind: str = "money"  # money | per_share | shares | pure | percent | ratio
    members: bool = False  # may be narrowed by a dimension member ("<product> net sales", "subscription revenue")
    derive: tuple | None = None  # ("sub" | "add" | "div", metric a, metric b): always computed
    fallback: tuple | None = None  # the same, used only when no concept has a value
    ext: str | None = None  # regex on a company extension concept's local name: the last resort
    formula: str = ""  # the computed figure's definition in words
    listed: bool = True  # offered on the Financials page
    veto: str | None = None  # words after the mention that mean something else ("how much cash did it return")
    # How a statement words the figure, "{}" standing for the amount without its sign: below zero for an income or
    # cash-flow line ("a net loss of {}"), always for a cash outflow line ("{} spent on ...").
    negative: str = ""
    outflow: str = ""
    # Above zero, for a line whose concept counts the sign its label names second (see _labelled).
    positive: str = ""


def _m(key, label, phrases, concepts=(), **kw) -> Metric:
    return Metric(key, label, tuple(phrases), tuple(concepts), **kw)


# "Earn" ending its clause, with no object: what a company earned is its profit. With an object ("how much revenue
# did it earn") the object is the figure, and this reading gives way to it (rag.facts.mentions).
_CLAUSE_ENDS = r"(?=\s+(?:in|during|for|over|through|last|this)\b|\s*[?.!,;]|\s*$)"
EARNED_ALONE = r"\bearn(?:ed|s)?" + _CLAUSE_ENDS
# "What did <brand> ads bring in during 2023", "how much did the segment take in": money brought in, with no object,
# is the revenue of whatever the clause's subject names. With an object ("how much cash did it bring in") the object
# is the figure, as with EARNED_ALONE.
BROUGHT_IN_ALONE = (r"\b(?:br(?:ing|ings|inging|ought)|t(?:ake|akes|aking|ook)|rak(?:e|es|ed|ing)|pull(?:s|ed|ing)?)"
                    r"\s+in" + _CLAUSE_ENDS
                    # Earned from a source ("what did it earn from value-added services"): that source's revenue.
                    + r"|\bearn(?:s|ed|ing)?(?=\s+from\b)"
                    # Sold, with no object, asked as an amount ("how much did it sell in <region>"): its sales
                    # there. "What does it sell" asks for its products.
                    + r"|\bhow\s+much\s+(?:did|does|do)\s+(?:[\w'’.&-]+\s+){1,4}?(?:sell|sold)" + _CLAUSE_ENDS)


def _activities(kind: str) -> list[str]:
    """A cash-flow section's net line asked in the question's own words around the section's name: "how much cash
    did <company>'s financing activities use", "net cash came in from its investing activities", "what did its
    operating activities bring in". "<kind> activities" names that section in every filing's cash-flow statement;
    cash spent "on" or "for" something inside it names one of the section's lines instead."""
    between = r"(?:(?!on\b|for\b)[\w&.'’()-]+\s+){0,6}?"
    verb = r"(?:bring\s+in|brought\s+in|generat\w*|provid\w*|produc\w*|us(?:e|ed|es)|consum\w*)"
    # "For" or "in" right before the section's name is the section itself: "cash did it use for investing activities".
    return [rf"(?:net\s+)?cash\s+{between}(?:(?:for|in)\s+)?{kind}\s+activities(?:\s+{verb}\b)?",
            rf"(?:did|do|does)\s+(?:[\w&.'’-]+\s+){{0,3}}?{kind}\s+activities\s+{verb}\b"]


# A balance of debt asked with a verb of paying it back or raising it is that year's cash flow ("how much debt did
# it pay down": the line "Repayments of notes payable"), not the balance; the filing's label names that line.
_DEBT_FLOW_VERB = r"\b(?:pa(?:y|id|ying)\s+(?:down|off|back)|repa(?:y|id)|retir|issu|rais|borrow|redeem)"

_G = "us-gaap:"
METRICS: list[Metric] = [
    _m("revenue", "Total revenue",
       # "(net) operating revenues" is the top line's own name in many filers' statements (utilities, transport,
       # beverages), not a qualified revenue.
       [r"total\s+net\s+revenues?", r"total\s+revenues?", r"(?:total\s+)?(?:net\s+)?operating\s+revenues?",
        r"net\s+revenues?", r"total\s+net\s+sales", r"net\s+sales",
        r"total\s+sales", r"revenues?", r"sales", r"top[\s-]line", r"turnover", r"revs?", BROUGHT_IN_ALONE],
       [_G + "Revenues", _G + "RevenueFromContractWithCustomerExcludingAssessedTax",
        _G + "RevenueFromContractWithCustomerIncludingAssessedTax", _G + "SalesRevenueNet", _G + "SalesRevenueGoodsNet",
        _G + "RevenuesNetOfInterestExpense"], members=True),
    _m("cost_of_revenue", "Cost of revenue",
       [r"(?:total\s+)?costs?\s+of\s+(?:net\s+)?(?:revenues?|sales|goods\s+sold|goods\s+and\s+services\s+sold)",
        r"cogs"],
       [_G + "CostOfRevenue", _G + "CostOfGoodsAndServicesSold", _G + "CostOfGoodsSold",
        _G + "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization"], members=True),
    _m("gross_profit", "Gross profit", [r"gross\s+profits?"], [_G + "GrossProfit"], members=True,
       fallback=("sub", "revenue", "cost_of_revenue"), formula="total revenue − cost of revenue"),
    _m("operating_income", "Operating income",
       [r"operating\s+(?:income|profits?|earnings|loss(?:es)?)(?:\s*\(loss\))?",
        # "Its operating result" is the line whether a profit or a loss; "results of operations" is MD&A's topic.
        r"operating\s+result\b", r"op\.?\s+(?:income|inc|profit)",
        r"(?:income|earnings|profit)\s+(?:\(loss\)\s+)?from\s+operations", r"loss\s+from\s+operations",
        # What a company or a part "earned from operations": its earnings from operations.
        r"earn(?:s|ed)?\s+from\s+(?:its\s+|their\s+)?operations",
        # What a part earns or loses "at the operating line / level": its operating income or loss.
        r"(?<=\bthe\s)operating\s+(?:line|level)"],
       [_G + "OperatingIncomeLoss"], members=True, negative="an operating loss of {}"),
    _m("operating_expenses", "Total operating expenses", [r"(?:total\s+)?operating\s+expenses", r"opex"],
       [_G + "OperatingExpenses"]),
    _m("costs_and_expenses", "Total costs and expenses", [r"(?:total\s+)?costs\s+and\s+expenses"],
       [_G + "CostsAndExpenses"]),
    _m("net_income", "Net income",
       [r"net\s+(?:income|earnings|profits?|loss(?:es)?)(?:\s*\(loss\))?", r"profits?", r"bottom[\s-]line",
        # "Was it profitable in 2024?": whether it made a profit is its net income's sign.
        r"(?<!how\s)profitable",
        # "How much did Acme earn in Q2 2025?": the verb with no object is the profit (see EARNED_ALONE).
        EARNED_ALONE],
       [_G + "NetIncomeLoss", _G + "ProfitLoss", _G + "NetIncomeLossAvailableToCommonStockholdersBasic"],
       negative="a net loss of {}"),
    _m("pretax_income", "Income before income taxes",
       [r"(?:income|earnings|profit)\s+(?:\(loss\)\s+)?before\s+(?:provision\s+for\s+)?(?:income\s+)?taxes",
        r"pre-?\s?tax\s+(?:income|profit|earnings)"],
       [_G + "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
        _G + "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments"],
       negative="a loss before income taxes of {}"),
    _m("income_tax", "Income tax expense",
       [r"(?:provision\s+for|benefit\s+from)\s+income\s+taxes", r"income\s+tax(?:es)?(?:\s+expense|\s+provision)?",
        r"tax\s+(?:expense|bill)"],
       [_G + "IncomeTaxExpenseBenefit"]),
    # What a company pays in income taxes is the cash it paid (the cash-flow statement's supplemental line), not the
    # year's tax expense, which holds deferred taxes: "how much did it pay in income taxes", "cash taxes paid".
    _m("income_taxes_paid", "Income taxes paid",
       [r"(?:cash\s+)?(?:paid|payments?)\s+(?:for\s+)?(?:income\s+)?taxes", r"(?:income\s+)?taxes\s+paid",
        r"cash\s+(?:income\s+)?taxes", r"(?:pay|pays|paid|paying)\s+(?:out\s+)?(?:in|for)\s+(?:income\s+)?taxes",
        r"(?:income\s+)?tax(?:es)?\s+(?:did|does|do)\s+(?:[\w'’.&-]+\s+){0,3}?(?:pay|paid)\b",
        # "How much cash did it hand over in income taxes": cash that went to taxes, whatever the verb.
        r"cash\s+(?:did|does|do)\s+(?:[\w'’.&-]+\s+){1,4}?(?:in|for|on|toward)\s+(?:income\s+)?taxes"],
       [_G + "IncomeTaxesPaidNet", _G + "IncomeTaxesPaid"], outflow="{} paid in income taxes"),
    # "Its tax rate" is the rate it paid on its pre-tax income; a statutory or marginal rate is the law's, not its own.
    _m("effective_tax_rate", "Effective tax rate",
       [r"effective\s+(?:income\s+)?tax\s+rate",
        r"(?<!statutory\s)(?<!federal\s)(?<!marginal\s)(?<!state\s)(?<!local\s)(?<!foreign\s)(?:income\s+)?tax\s+rate"],
       [_G + "EffectiveIncomeTaxRateContinuingOperations"], kind="pure",
       fallback=("div", "income_tax", "pretax_income"), formula="income tax expense / income before income taxes"),
    _m("eps_diluted", "Diluted EPS",
       [r"diluted\s+(?:eps|earnings\s+per\s+(?:common\s+)?share|net\s+income\s+per\s+(?:common\s+)?share)",
        r"(?:eps|earnings\s+per\s+(?:common\s+)?share|net\s+income\s+per\s+(?:common\s+)?share)(?:\s*[,(-]?\s*diluted\)?)?",
        # The verb form analysts use: "how much did it earn per share", "earned per diluted share".
        r"(?:earn|earned|earning|made|make)\s+per\s+(?:diluted\s+)?(?:common\s+)?share",
        # "Net income per diluted share", "earnings per diluted Class A share": the class named stays its qualifier.
        r"(?:net\s+income|earnings|profits?)\s+per\s+diluted\s+(?:class\s+[a-z](?:-?\d)?\s+)?(?:common\s+)?share"],
       # A filer with several classes of stock may tag its earnings per share only per class (some filers do): the class
       # the question names is a member.
       [_G + "EarningsPerShareDiluted", _G + "EarningsPerShareBasicAndDiluted"], kind="per_share", members=True),
    _m("eps_basic", "Basic EPS",
       [r"basic\s+(?:eps|earnings\s+per\s+(?:common\s+)?share|net\s+income\s+per\s+(?:common\s+)?share)",
        r"(?:eps|earnings\s+per\s+(?:common\s+)?share)\s*[,(-]?\s*basic\)?",
        r"(?:net\s+income|earnings|profits?)\s+per\s+basic\s+(?:class\s+[a-z](?:-?\d)?\s+)?(?:common\s+)?share"],
       [_G + "EarningsPerShareBasic", _G + "EarningsPerShareBasicAndDiluted"], kind="per_share", members=True),
    _m("rnd", "Research and development expense",
       [r"research\s+and\s+development(?:\s+(?:expenses?|costs?|spending))?", r"r\s*&\s*d(?:\s+(?:expenses?|spending))?"],
       [_G + "ResearchAndDevelopmentExpense", _G + "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost",
        _G + "ResearchAndDevelopmentExpenseSoftwareExcludingAcquiredInProcessCost"]),
    _m("sga", "Selling, general and administrative expense",
       [r"selling,?\s+general,?\s+and\s+administrative(?:\s+(?:expenses?|costs?))?", r"sg\s*&\s*a"],
       [_G + "SellingGeneralAndAdministrativeExpense"],
       # Filers that print selling and marketing apart from general and administrative: SG&A is the two together.
       fallback=("add", "sales_marketing", "gna"), formula="sales and marketing + general and administrative"),
    _m("sales_marketing", "Sales and marketing expense",
       [r"(?:sales|selling)\s+and\s+marketing(?:\s+expenses?)?"], [_G + "SellingAndMarketingExpense"]),
    _m("gna", "General and administrative expense", [r"general\s+and\s+administrative(?:\s+expenses?)?"],
       [_G + "GeneralAndAdministrativeExpense"]),
    _m("interest_expense", "Interest expense", [r"interest\s+expense"],
       [_G + "InterestExpense", _G + "InterestExpenseNonoperating", _G + "InterestExpenseDebt",
        _G + "InterestAndDebtExpense"]),
    _m("net_interest_income", "Net interest income", [r"net\s+interest\s+income"], [_G + "InterestIncomeExpenseNet"]),
    _m("dna", "Depreciation and amortization",
       [r"depreciation,?\s+(?:depletion\s+)?and\s+amortization", r"d\s*&\s*a"],
       [_G + "DepreciationDepletionAndAmortization", _G + "DepreciationAmortizationAndAccretionNet",
        _G + "DepreciationAndAmortization"],
       # A filer's own line that adds more to it ("Depreciation, amortization and impairment"), shown as printed.
       ext=r"^DepreciationAmortization"),
    _m("sbc", "Stock-based compensation",
       # "Stock-based comp", "stock comp": the clipped word analysts type.
       [r"(?:stock|share)[\s-]based\s+comp(?:ensation)?(?:\s+expense)?", r"stock\s+comp(?:ensation)?(?:\s+expense)?",
        r"sbc(?:\s+expense)?"],
       [_G + "ShareBasedCompensation", _G + "AllocatedShareBasedCompensationExpense"]),
    _m("operating_cash_flow", "Operating cash flow",
       [r"(?:net\s+)?cash\s+(?:flows?\s+)?(?:provided\s+by|generated\s+(?:by|from)|from)\s+(?:\(used\s+in\)\s+)?"
        r"operati(?:ng\s+activities|ons)",
        r"operating\s+cash\s+flows?", r"cash\s+flows?\s+from\s+operati(?:ons|ng\s+activities)", r"ocf",
        # The question's subject between the words: "how much cash did <company> generate from operations".
        r"cash\s+(?:did|was|were|has|have)\s+(?:[\w&.'-]+\s+){0,4}?(?:generated?|provided?)\s+(?:by|from|in)\s+"
        r"(?:its\s+|their\s+)?operati(?:ng\s+activities|ons)",
        # The operations as the subject: "how much cash did <company>'s operations bring in / generate".
        r"cash\s+(?:did|do|does)\s+(?:[\w&.'’-]+\s+){0,3}?operations\s+(?:bring\s+in|generate|produce|throw\s+off)",
        r"cash\s+(?:brought\s+in|generated|produced|thrown\s+off)\s+by\s+(?:its\s+|their\s+)?operations",
        *_activities("operating")],
       [_G + "NetCashProvidedByUsedInOperatingActivities",
        _G + "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations"],
       negative="{} of net cash used in operating activities"),
    _m("investing_cash_flow", "Investing cash flow",
       [r"(?:net\s+)?cash\s+(?:flows?\s+)?(?:used\s+(?:in|for)|provided\s+by|from)\s+(?:\(used\s+in\)\s+)?"
        r"investing\s+activities",
        r"investing\s+cash\s+flows?", *_activities("investing")],
       [_G + "NetCashProvidedByUsedInInvestingActivities",
        _G + "NetCashProvidedByUsedInInvestingActivitiesContinuingOperations"],
       negative="{} of net cash used in investing activities"),
    _m("financing_cash_flow", "Financing cash flow",
       [r"(?:net\s+)?cash\s+(?:flows?\s+)?(?:used\s+(?:in|for)|provided\s+by|from)\s+(?:\(used\s+in\)\s+)?"
        r"financing\s+activities",
        r"financing\s+cash\s+flows?", *_activities("financing")],
       [_G + "NetCashProvidedByUsedInFinancingActivities",
        _G + "NetCashProvidedByUsedInFinancingActivitiesContinuingOperations"],
       negative="{} of net cash used in financing activities"),
    _m("capex", "Capital expenditures",
       [r"capital\s+expenditures?", r"capex", r"capital\s+spending",
        r"(?:purchases?|payments?\s+for|acquisitions?)\s+of\s+property,?\s+(?:plant,?\s+)?and\s+equipment",
        r"payments?\s+for\s+property,?\s+(?:plant,?\s+)?and\s+equipment",
        # "Additions to property, plant and equipment" (some filers' own line), and PP&E as what cash was spent on:
        # capital spending, not the balance.
        # A list may drop the "and" ("spend on property, equipment and intangible assets").
        r"(?:additions?\s+to|sp(?:end|ent|ending)\s+(?:\w+\s+){0,3}?(?:on|for))\s+(?:property,?\s+(?:plant,?\s+)?"
        r"(?:and\s+)?equipment|pp\s*&\s*e|ppe)"],
       [_G + "PaymentsToAcquirePropertyPlantAndEquipment", _G + "PaymentsToAcquireProductiveAssets"],
       ext=r"^(?:PurchasesOf|PaymentsFor|PaymentsToAcquire)Property(?:Plant)?AndEquipment",
       outflow="{} spent on purchases of property and equipment"),
    # The cash-flow statement's line for what exchange rates did to the cash held abroad (ASC 230-10-45-24): "the
    # effect of exchange rate changes on cash", "by how much did currency moves drag down its cash".
    _m("fx_effect_on_cash", "Effect of exchange rate changes on cash",
       [r"(?:effects?|impacts?)\s+of\s+(?:foreign\s+)?(?:currency|exchange[\s-]rates?|fx)(?:\s+(?:rate\s+)?(?:changes?|"
        r"movements?|moves?))?\s+on\s+(?:the\s+|its\s+)?cash",
        r"(?:currency|exchange[\s-]rates?|fx|forex)\s+(?:rate\s+)?(?:moves?|movements?|changes?|swings?|fluctuations?)\s+"
        r"(?:[\w'’.&-]+\s+){0,6}?cash(?:\s+balance|\s+position)?"],
       [_G + "EffectOfExchangeRateOnCashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        _G + "EffectOfExchangeRateOnCashCashEquivalentsRestrictedCashAndRestrictedCashEquivalentsIncludingDisposalGroup"
        "AndDiscontinuedOperations", _G + "EffectOfExchangeRateOnCashAndCashEquivalents"],
       negative="{} lower cash from exchange rate changes"),
    # The investing line every filer tags for businesses bought: "how much did it spend on acquisitions".
    _m("acquisitions_paid", "Cash paid for acquisitions (net of cash acquired)",
       [r"(?:cash\s+)?(?:paid|pay|payments?|spen[dt]|spending)\s+(?:in\s+cash\s+)?(?:for|on)\s+(?:business\s+)?"
        r"acquisitions",
        r"(?:business\s+)?acquisitions(?:\s+of\s+businesses)?,?\s+net\s+of\s+cash(?:\s+acquired)?",
        r"business\s+combinations,?\s+net\s+of\s+cash(?:\s+acquired)?",
        r"(?:pa(?:y|id)|spen[dt])\s+(?:in\s+cash\s+)?(?:to\s+)?acquir(?:e|ing)\s+(?:other\s+)?(?:businesses|companies)"],
       [_G + "PaymentsToAcquireBusinessesNetOfCashAcquired", _G + "PaymentsToAcquireBusinessesGross"],
       # A filer's own line that joins businesses bought with other purchases ("Acquisitions, net of cash acquired,
       # and purchases of intangible and other assets"): the investing line acquisitions are reported on.
       ext=r"^(?:PaymentsToAcquireBusinesses|Acquisitions(?:NetOfCashAcquired|OfBusinesses))",
       outflow="{} spent on acquisitions, net of cash acquired"),
    _m("free_cash_flow", "Free cash flow", [r"free\s+cash\s+flows?", r"fcf"],
       derive=("sub", "operating_cash_flow", "capex"), formula="operating cash flow − capital expenditures"),
    _m("dividends_paid", "Dividends paid",
       [r"(?:cash\s+)?dividends\s+paid", r"payments?\s+(?:of|for)\s+dividends", r"dividend\s+payments",
        # "paid out to shareholders in dividends", "paid out more in dividends", "pay out as cash dividends".
        r"pa(?:y|id)\s+(?:out\s+)?(?:more\s+|less\s+)?(?:to\s+(?:its\s+|their\s+)?(?:share|stock)(?:holders|owners)\s+)?"
        r"(?:in|as)\s+(?:cash\s+)?dividends",
        # Where money went ("what share of its earnings went to dividends", "spent on dividends"): cash paid out.
        r"(?:went|go(?:es)?|spent|spend(?:s|ing)?)\s+(?:out\s+)?(?:to|on|toward|towards)\s+(?:cash\s+)?dividends"],
       [_G + "PaymentsOfDividends", _G + "PaymentsOfDividendsCommonStock"], outflow="{} paid out in dividends"),
    _m("dps", "Dividends declared per share",
       [r"dividends?\s+(?:declared\s+|paid\s+)?per\s+(?:common\s+)?share"],
       [_G + "CommonStockDividendsPerShareDeclared", _G + "CommonStockDividendsPerShareCashPaid"], kind="per_share"),
    # The count of shares bought back, not what they cost: "how many shares did it buy back", "shares repurchased".
    _m("shares_repurchased", "Shares repurchased",
       [r"(?:number\s+of\s+)?shares\s+(?:of\s+(?:its\s+)?(?:common\s+)?stock\s+)?(?:repurchased|bought\s+back)",
        r"(?<=many\s)(?:of\s+(?:its|their)\s+(?:own\s+)?)?(?:common\s+)?shares\s+(?:did|does|has|had|have)\s+"
        r"(?:[\w.&'’-]+\s+){1,3}?(?:repurchas\w*|bu(?:y|ys|ying)\s+back|bought\s+back)"],
       [_G + "TreasuryStockSharesAcquired", _G + "StockRepurchasedDuringPeriodShares",
        _G + "StockRepurchasedAndRetiredDuringPeriodShares"], kind="shares"),
    _m("buybacks", "Share repurchases",
       [r"(?:share|stock)\s+repurchases?", r"(?:share\s+|stock\s+)?buybacks?",
        r"repurchases?\s+of\s+(?:its\s+)?(?:common\s+)?(?:stock|shares)",
        # The verb with its object: "how much cash did it pay to repurchase its common stock".
        r"repurchas(?:e|ed|ing)\s+(?:its\s+|their\s+)?(?:own\s+)?(?:common\s+)?(?:stock|shares)",
        r"payments?\s+for\s+repurchases?\s+of\s+common\s+stock",
        r"(?:bu(?:y|ys|ying)|bought)\s+back\s+(?:(?:its|their)\s+)?(?:own\s+)?(?:common\s+)?(?:stock|shares)",
        # The object before the verb: "how much stock did it repurchase / buy back" (an amount; "how many shares"
        # is a count of shares).
        r"(?<=much\s)(?:common\s+)?stock\s+(?:did|does|has|had)\s+(?:[\w.&'’-]+\s+){1,3}?"
        r"(?:repurchas\w*|bu(?:y|ys|ying)\s+back|bought\s+back)"],
       [_G + "PaymentsForRepurchaseOfCommonStock"], outflow="{} spent on repurchases of common stock"),
    # What a company hands back to its owners in cash, as analysts total it: dividends paid and shares bought back,
    # the two cash-flow lines that pay shareholders ("how much cash did it return to shareholders"). Not the total
    # shareholder return of a stock-performance graph.
    _m("shareholder_returns", "Cash returned to shareholders",
       [r"(?:cash\s+|capital\s+)?return(?:ed|s|ing)?\s+(?:(?:in\s+)?cash\s+|capital\s+)?to\s+(?:its\s+|their\s+)?"
        r"(?:share|stock)holders",
        # "How much cash did it hand back to shareholders": the same, whatever the verb before "back".
        r"(?:hand(?:s|ed|ing)?|g[ia]ve|giv(?:es|ing)|sen[dt]|pa(?:y|id|ys))\s+back\s+to\s+(?:its\s+|their\s+)?"
        r"(?:share|stock)holders", r"(?<!total\s)(?:cash|capital)\s+returns?\s+to\s+(?:share|stock)holders"],
       derive=("add", "dividends_paid", "buybacks"), formula="dividends paid + share repurchases",
       # "Returned to shareholders through buybacks": one of the two ways named asks for that one's amount, never
       # the sum (both named, "through buybacks and dividends", is the sum again).
       veto=r"^\s*(?:[\w.&'’-]+\s+){0,3}?(?:through|via|by\s+way\s+of|in\s+the\s+form\s+of|by|with|as)\s+"
            r"(?:share\s+|stock\s+)?(?:buy-?backs?|repurchases?|dividends?)\b(?!\s+(?:and|&|plus)\b)"),
    _m("repurchase_remaining", "Remaining share repurchase authorization",
       [r"remaining\s+(?:\w+\s+){0,2}?(?:repurchase\s+)?(?:authority|authorization)",
        r"(?:repurchase\s+)?(?:authority|authorization)\s+(?:that\s+)?remain\w*",
        r"(?:stock|share)\s+repurchase\s+(?:authority|authorization)\s+(?:that\s+)?remain\w*",
        # What is left, said before the program: "how much remained on its share repurchase authorization",
        # "capacity left under its repurchase authority" (Item 703's "may yet be purchased under the plans").
        r"(?:left|remain\w*|available)\s+(?:to\s+\w+\s+)?(?:on|under|in)\s+(?:[\w.&'’-]+\s+){0,4}?"
        r"(?:repurchase|buyback)\s+(?:authority|authori[sz]ations?|programs?|plans?)",
        # ... or after it: "how much buyback authorization does it have left", "buyback capacity ... left".
        r"(?:repurchase|buyback)\s+(?:authority|authori[sz]ation|capacity)(?=(?:\s+[\w.&'’-]+){0,4}?\s+"
        r"(?:left|remain\w*|unused)\b)"],
       [_G + "StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1"], period="instant"),
    # A balance sheet's size is its total assets, as analysts say it.
    _m("total_assets", "Total assets", [r"total\s+assets", r"assets", r"size\s+of\s+(?:[\w&.'’-]+\s+){0,3}?balance\s+sheet",
                                          r"how\s+(?:big|large)\s+(?:was|is)\s+(?:[\w&.'’-]+\s+){0,3}?balance\s+sheet"],
       [_G + "Assets"], period="instant"),
    _m("current_assets", "Total current assets", [r"(?:total\s+)?current\s+assets"], [_G + "AssetsCurrent"],
       period="instant"),
    # Many balance sheets print no "Total liabilities" line (nor tag us-gaap:Liabilities): it is then what the
    # statement's own totals leave, total liabilities and equity less total equity.
    _m("total_liabilities", "Total liabilities", [r"total\s+liabilities", r"liabilities"], [_G + "Liabilities"],
       period="instant", fallback=("sub", "liabilities_and_equity", "total_equity"),
       formula="total liabilities and equity − total equity"),
    _m("current_liabilities", "Total current liabilities", [r"(?:total\s+)?current\s+liabilities"],
       [_G + "LiabilitiesCurrent"], period="instant"),
    _m("liabilities_and_equity", "Total liabilities and equity",
       [r"total\s+liabilities\s+and\s+(?:(?:stock|share)holders'?\s+|shareowners'?\s+)?equity"],
       [_G + "LiabilitiesAndStockholdersEquity"], period="instant"),
    # Equity with the noncontrolling interests: what a balance sheet's total liabilities and equity adds to.
    _m("total_equity", "Total equity", [],
       [_G + "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", _G + "StockholdersEquity"],
       period="instant", listed=False),
    _m("equity", "Stockholders' equity",
       [r"(?:total\s+)?(?:stock|share)holders?'?s?'?\s+equity", r"(?:total\s+)?shareowners?'?s?'?\s+equity",
        r"total\s+equity", r"book\s+value"],
       [_G + "StockholdersEquity", _G + "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"],
       period="instant"),
    _m("cash", "Cash and cash equivalents",
       # Analysts' own words for the balance ("cash pile", "cash holdings") name it, not a part of it.
       [r"cash\s+and\s+(?:cash\s+)?equivalents",
        r"cash(?:\s+balance|\s+on\s+hand|\s+position|\s+pile|\s+hoard|\s+holdings)?"],
       [_G + "CashAndCashEquivalentsAtCarryingValue", _G + "Cash",
        _G + "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"], period="instant",
       # Cash spent, paid, acquired with a business ("net of cash acquired", "cash on acquisitions") or flowing:
       # a cash-flow line or a part of a deal, not the balance.
       veto=r"\b(?:return|spen[dt]|pa(?:y|id)|use[ds]?|generat|rais|invest|burn|distribut|flow|held|hold|from|"
            r"hand|g[ia]ve|sen[dt]|deploy|allocat|devot|pour|acqui|assum)"),
    _m("inventory", "Inventories", [r"inventor(?:y|ies)"], [_G + "InventoryNet"], period="instant"),
    _m("receivables", "Accounts receivable",
       [r"accounts\s+receivable(?:,?\s+net)?", r"trade\s+receivables?", r"receivables"],
       [_G + "AccountsReceivableNetCurrent", _G + "ReceivablesNetCurrent"], period="instant"),
    _m("payables", "Accounts payable", [r"accounts\s+payable"], [_G + "AccountsPayableCurrent"], period="instant"),
    _m("goodwill", "Goodwill", [r"goodwill"], [_G + "Goodwill"], period="instant"),
    _m("ppe", "Property, plant and equipment, net",
       # Analysts shorten it to PP&E, PPE, or PPNE for the net figure.
       [r"property,?\s+(?:plant,?\s+)?and\s+equipment(?:,?\s+net)?", r"pp\s*&\s*e", r"ppn?e"],
       [_G + "PropertyPlantAndEquipmentNet"], period="instant"),
    _m("retained_earnings", "Retained earnings (accumulated deficit)",
       [r"retained\s+earnings", r"accumulated\s+deficit"], [_G + "RetainedEarningsAccumulatedDeficit"],
       period="instant"),
    _m("deferred_revenue", "Deferred revenue (contract liabilities)",
       [r"deferred\s+revenues?", r"unearned\s+revenues?", r"contract\s+liabilit(?:y|ies)"],
       [_G + "ContractWithCustomerLiability", _G + "DeferredRevenue", _G + "ContractWithCustomerLiabilityCurrent",
        _G + "DeferredRevenueCurrent"], period="instant"),
    _m("long_term_debt", "Long-term debt (non-current)",
       [r"long[\s-]term\s+debt(?:,?\s+non[\s-]?current)?",
        r"non[\s-]?current\s+(?:portion\s+of\s+)?(?:long[\s-]term\s+|term\s+)?debt"],
       [_G + "LongTermDebtNoncurrent", _G + "LongTermDebtAndCapitalLeaseObligations", _G + "LongTermDebt"],
       period="instant", veto=_DEBT_FLOW_VERB),
    _m("ltd_current", "Current portion of long-term debt",
       [r"current\s+portion\s+of\s+(?:long[\s-]term\s+|term\s+)?debt", r"current\s+(?:term\s+)?debt"],
       [_G + "LongTermDebtCurrent", _G + "LongTermDebtAndCapitalLeaseObligationsCurrent"], period="instant",
       veto=_DEBT_FLOW_VERB),
    _m("total_debt", "Total term debt (current + non-current)",
       [r"total\s+(?:term|long[\s-]term)\s+debt", r"term\s+debt",
        r"long[\s-]term\s+debt,?\s+including\s+(?:the\s+)?current\s+(?:portion|maturities)"],
       [_G + "LongTermDebt", _G + "LongTermDebtAndCapitalLeaseObligationsIncludingCurrentMaturities"],
       period="instant", fallback=("add", "ltd_current", "long_term_debt"),
       formula="current portion + non-current portion of long-term debt", veto=_DEBT_FLOW_VERB),
    _m("shares_outstanding", "Shares outstanding",
       [r"(?:common\s+)?shares\s+(?:of\s+(?:\w+\s+)?(?:common\s+)?stock\s+)?(?:were\s+|are\s+)?(?:issued\s+and\s+)?"
        r"outstanding",
        r"outstanding\s+(?:common\s+)?shares", r"share\s+count",
        # Asked with a verb between: "how many shares did it have outstanding". The words naming a class ("Class A
        # shares") stay outside the phrase, so a class the facts cannot name gets no figure rather than the sum.
        # "How many shares of common stock did it have outstanding" names the stock without a class.
        r"shares\s+(?:of\s+(?:common\s+|capital\s+)?stock\s+)?(?:did|does|do|were|are|was|is)\s+"
        r"(?:[\w'’.&-]+\s+){0,3}?(?:have\s+|has\s+|had\s+)?outstanding",
        # "How many shares of its Class C stock were outstanding": the class named inside, before "stock", stays
        # outside this phrase as its qualifier.
        r"(?<=\bshares\sof\s)(?:[\w'’.&-]+\s+){1,4}?stock\s+(?:were|are|was|is)\s+(?:issued\s+and\s+)?outstanding"],
       ["dei:EntityCommonStockSharesOutstanding", _G + "CommonStockSharesOutstanding"], period="cover",
       kind="shares", members=True),  # the cover page counts each class of stock as a member
    _m("weighted_diluted", "Weighted-average diluted shares",
       [r"weighted[\s-]average\s+(?:number\s+of\s+)?diluted\s+shares(?:\s+outstanding)?",
        r"diluted\s+(?:weighted[\s-]average\s+)?shares(?:\s+outstanding)?",
        # "the weighted average diluted share count": not the cover's count of shares outstanding.
        r"(?:weighted[\s-]average\s+)?diluted\s+share\s+count"],
       [_G + "WeightedAverageNumberOfDilutedSharesOutstanding"], kind="shares"),
    _m("weighted_basic", "Weighted-average basic shares",
       [r"weighted[\s-]average\s+(?:number\s+of\s+)?(?:basic\s+)?shares(?:\s+outstanding)?",
        r"basic\s+(?:weighted[\s-]average\s+)?shares(?:\s+outstanding)?",
        r"(?:weighted[\s-]average\s+(?:basic\s+)?|basic\s+)share\s+count"],
       [_G + "WeightedAverageNumberOfSharesOutstandingBasic"], kind="shares"),
    _m("public_float", "Public float", [r"public\s+float", r"aggregate\s+market\s+value"], ["dei:EntityPublicFloat"],
       period="cover"),
    # Computed metrics: always from the two reported figures, with the formula shown.
    _m("gross_margin", "Gross margin",
       [r"gross\s+(?:profit\s+)?margins?(?:\s+(?:percentage|rate|ratio))?"],
       derive=("div", "gross_profit", "revenue"), kind="percent", formula="gross profit / total revenue"),
    _m("operating_margin", "Operating margin",
       [r"operating\s+(?:profit\s+|income\s+)?margins?(?:\s+(?:percentage|rate|ratio))?", r"op\.?\s+margins?"],
       derive=("div", "operating_income", "revenue"), kind="percent", formula="operating income / total revenue"),
    _m("net_margin", "Net profit margin",
       [r"net\s+(?:profit\s+|income\s+)?margins?", r"profit\s+margins?",
        r"how\s+profitable"],  # how much of each dollar of revenue is kept as profit
       derive=("div", "net_income", "revenue"), kind="percent", formula="net income / total revenue"),
    _m("fcf_margin", "Free cash flow margin", [r"free\s+cash\s+flow\s+margins?", r"fcf\s+margins?"],
       derive=("div", "free_cash_flow", "revenue"), kind="percent", formula="free cash flow / total revenue"),
    _m("current_ratio", "Current ratio", [r"current\s+ratio"],
       derive=("div", "current_assets", "current_liabilities"), kind="ratio",
       formula="total current assets / total current liabilities"),
    _m("working_capital", "Working capital", [r"(?:net\s+)?working\s+capital"],
       derive=("sub", "current_assets", "current_liabilities"), period="instant",
       formula="total current assets − total current liabilities"),
    _m("debt_to_equity", "Debt-to-equity (total liabilities / equity)",
       [r"debt[\s-]to[\s-]equity(?:\s+ratio)?", r"liabilities[\s-]to[\s-]equity(?:\s+ratio)?"],
       derive=("div", "total_liabilities", "equity"), kind="ratio",
       formula="total liabilities / stockholders' equity"),
    # Leverage as the share of the capital its lenders provide: term debt over term debt plus equity.
    _m("debt_capital", "Total capital (total term debt + stockholders' equity)", [],
       derive=("add", "total_debt", "equity"), period="instant", listed=False,
       formula="total term debt + stockholders' equity"),
    _m("debt_to_capital", "Debt-to-capital (total term debt / (total term debt + equity))",
       [r"debt[\s-]to[\s-](?:total\s+)?capital(?:i[sz]ation)?(?:\s+ratio)?"],
       derive=("div", "total_debt", "debt_capital"), kind="percent",
       formula="total term debt / (total term debt + stockholders' equity)"),
    _m("roe", "Return on equity (period-end equity)",
       [r"return\s+on\s+(?:(?:stock|share)holders'?\s+)?equity", r"roe"],
       derive=("div", "net_income", "equity"), kind="percent", formula="net income / period-end stockholders' equity"),
    _m("roa", "Return on assets (period-end assets)", [r"return\s+on\s+(?:total\s+)?assets", r"roa"],
       derive=("div", "net_income", "total_assets"), kind="percent", formula="net income / period-end total assets"),
    # The standard ratios analysts compute from statement lines, each labelled with the definition used (balances at
    # the period's end, as for ROE; a quarter's figures are not annualised): a ratio asked for is computed and shown
    # with its inputs, never left as two loose lines.
    _m("inventory_turnover", "Inventory turnover (cost of revenue / period-end inventories)",
       [r"inventory\s+turnover(?:\s+ratio)?", r"inventory\s+turns", r"turnover\s+of\s+(?:its\s+)?inventor(?:y|ies)",
        r"turns?\s+over\s+(?:its\s+|their\s+|the\s+)?inventor(?:y|ies)"],
       derive=("div", "cost_of_revenue", "inventory"), kind="ratio",
       formula="cost of revenue / period-end inventories"),
    _m("payout_ratio", "Dividend payout ratio (dividends paid / net income)",
       [r"(?:dividend\s+)?payout\s+ratio", r"dividend\s+payout"],
       derive=("div", "dividends_paid", "net_income"), kind="percent", formula="dividends paid / net income"),
    _m("interest_coverage", "Interest coverage (operating income / interest expense)",
       [r"interest\s+coverage(?:\s+ratio)?", r"times\s+interest\s+earned",
        # "How many times did its operating income cover its interest expense?"
        r"cover(?:ed|s)?\s+(?:its\s+|their\s+|the\s+)?interest\s+(?:expense|costs?|payments?)"],
       derive=("div", "operating_income", "interest_expense"), kind="ratio",
       formula="operating income / interest expense"),
    # Liquidity: the acid test leaves out inventories, the assets slowest to turn into cash.
    _m("quick_assets", "Current assets excluding inventories", [],
       derive=("sub", "current_assets", "inventory"), period="instant", listed=False,
       formula="total current assets − inventories"),
    _m("quick_ratio", "Quick ratio ((current assets − inventories) / current liabilities)",
       [r"quick\s+ratio", r"acid[\s-]test(?:\s+ratio)?"],
       derive=("div", "quick_assets", "current_liabilities"), kind="ratio",
       formula="(total current assets − inventories) / total current liabilities"),
    _m("cash_ratio", "Cash ratio (cash and cash equivalents / current liabilities)", [r"cash\s+ratio"],
       derive=("div", "cash", "current_liabilities"), kind="ratio",
       formula="cash and cash equivalents / total current liabilities"),
    # Efficiency: how much revenue each dollar of assets or of receivables carries over the year.
    _m("asset_turnover", "Asset turnover (total revenue / period-end total assets)",
       [r"(?:total\s+)?asset\s+turnover(?:\s+ratio)?", r"turnover\s+of\s+(?:its\s+)?(?:total\s+)?assets"],
       derive=("div", "revenue", "total_assets"), kind="ratio", formula="total revenue / period-end total assets"),
    _m("receivables_turnover", "Receivables turnover (total revenue / period-end accounts receivable)",
       [r"(?:accounts\s+)?receivables?\s+turnover(?:\s+ratio)?"],
       derive=("div", "revenue", "receivables"), kind="ratio",
       formula="total revenue / period-end accounts receivable"),
    # Working-capital days: a period-end balance as days of the year's flow that runs through it (× 365).
    _m("days_sales_outstanding", "Days sales outstanding (period-end accounts receivable / total revenue × 365)",
       [r"days\s+sales\s+outstanding", r"\bdso\b", r"days\s+(?:of\s+)?receivables?(?:\s+outstanding)?",
        r"receivables?\s+days", r"(?:average\s+)?collection\s+period"],
       derive=("div", "receivables", "revenue"), kind="days",
       formula="period-end accounts receivable / total revenue × 365"),
    _m("days_inventory_outstanding", "Days inventory outstanding (period-end inventories / cost of revenue × 365)",
       [r"days\s+(?:of\s+)?inventor(?:y|ies)(?:\s+outstanding|\s+on\s+hand)?", r"\bdio\b", r"inventory\s+days",
        r"days\s+in\s+inventory"],
       derive=("div", "inventory", "cost_of_revenue"), kind="days",
       formula="period-end inventories / cost of revenue × 365"),
    _m("days_payables_outstanding", "Days payables outstanding (period-end accounts payable / cost of revenue × 365)",
       [r"days\s+(?:of\s+)?payables?(?:\s+outstanding)?", r"\bdpo\b", r"payables?\s+days"],
       derive=("div", "payables", "cost_of_revenue"), kind="days",
       formula="period-end accounts payable / cost of revenue × 365"),
    # The operating ratio of railroads and other carriers: the share of revenue its operating costs take, which is
    # revenue less operating income whatever lines the income statement splits them into.
    _m("operating_costs", "Operating costs (total revenue − operating income)", [],
       derive=("sub", "revenue", "operating_income"), listed=False, formula="total revenue − operating income"),
    _m("operating_ratio", "Operating ratio (operating expenses / total revenue)", [r"operating\s+ratio"],
       derive=("div", "operating_costs", "revenue"), kind="percent",
       formula="(total revenue − operating income) / total revenue"),
    # Earnings before interest, taxes, depreciation and amortization, taken the common way from the statements'
    # operating income; a filer's own adjusted EBITDA is a non-GAAP figure its MD&A prints in words.
    _m("ebitda", "EBITDA (operating income + depreciation and amortization)", [r"ebitda"],
       derive=("add", "operating_income", "dna"), formula="operating income + depreciation and amortization"),
    # Its margin: the share of revenue EBITDA is, asked by the name analysts give it.
    _m("ebitda_margin", "EBITDA margin (EBITDA / total revenue)", [r"ebitda\s+margin"],
       derive=("div", "ebitda", "revenue"), kind="percent",
       formula="(operating income + depreciation and amortization) / total revenue"),
]
METRIC_BY_KEY = {m.key: m for m in METRICS}
# Fallback concepts whose meaning differs from the metric's label enough to say which was used.
NOTE_CONCEPTS = {
    _G + "ProfitLoss", _G + "NetIncomeLossAvailableToCommonStockholdersBasic", _G + "RevenuesNetOfInterestExpense",
    _G + "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
    _G + "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents", _G + "LongTermDebt",
    _G + "LongTermDebtAndCapitalLeaseObligations", _G + "LongTermDebtAndCapitalLeaseObligationsIncludingCurrentMaturities",
    _G + "EarningsPerShareBasicAndDiluted", _G + "ContractWithCustomerLiabilityCurrent", _G + "DeferredRevenueCurrent",
    _G + "CommonStockSharesOutstanding", _G + "PaymentsToAcquireProductiveAssets",
    _G + "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization",
}
METRIC_PATTERNS = [
    (m, re.compile(r"(?<![\w&-])(?:" + p + r")(?![\w&-])")) for m in METRICS for p in m.phrases
]


# A figure asked for by the label the filing prints beside it (rag.facts.row_labels): one concept, no phrase list.
# Its key carries what defines it, "concept|<period>|<qname>|<label>", so any stage can rebuild it from a mention.
LABELLED_PREFIX = "concept|"


def labelled_key(concept: str, label: str, instant: bool) -> str:
    return "|".join((LABELLED_PREFIX.rstrip("|"), "instant" if instant else "duration", concept, label))


@lru_cache(maxsize=512)
def _labelled(key: str) -> Metric:
    _prefix, period, concept, label = key.split("|", 3)
    # Below zero, a line printed in two signs is worded in the other one: "$294 million of other expense, net".
    below_zero = other_sign(label)
    if below_zero and _INCOME_POSITIVE.search(concept) and _EXPENSE_FIRST.match(first_sign(label)):
        # "Interest expense (income), net" tagged InterestIncomeExpense...Net: the concept counts income above zero,
        # so its figure above zero is the income the label names second, and below zero the expense it names first.
        return Metric(key, label, (), (concept,), period=period, listed=False,
                      positive=f"{{}} of {below_zero}", negative=f"{{}} of {first_sign(label)}")
    return Metric(key, label, (), (concept,), period=period, listed=False,
                  negative=f"{{}} of {below_zero}" if below_zero else "")


# A concept that nets income against expense names income first (InterestIncomeExpenseNonoperatingNet,
# NonoperatingIncomeExpense): above zero is income. A label that names the expense first reads the other way.
_INCOME_POSITIVE = re.compile(r":\w*(?:Income|Gain)(?:Loss|Expense)")
_EXPENSE_FIRST = re.compile(r"^(?:[\w-]+\s+){0,3}?(?:expenses?|loss(?:es)?|costs?)\b")


def metric(key: str) -> Metric:
    if key.startswith(LABELLED_PREFIX):
        return _labelled(key)
    return METRIC_BY_KEY[key]



def member_concepts(metric_: Metric) -> tuple[str, ...]:
    """The concepts whose dimension members can narrow a metric ("<segment> operating income"): its own, or, for
    a figure computed from two that both can be narrowed (a segment's operating margin), its inputs'. Empty when
    the metric is only ever the company's total."""
    if metric_.members:
        return metric_.concepts
    if metric_.derive and all(METRIC_BY_KEY[key].members for key in metric_.derive[1:]):
        return tuple(c for key in metric_.derive[1:] for c in METRIC_BY_KEY[key].concepts)
    return ()


# Where each reported metric is printed: the primary statement an analyst turns to for it. A computed metric lives
# where its inputs do ("inventory turnover" needs the income statement and the balance sheet).
STATEMENT_METRICS = {
    "income statement": (
        "revenue", "cost_of_revenue", "gross_profit", "operating_income", "operating_expenses", "costs_and_expenses",
        "net_income", "pretax_income", "income_tax", "eps_diluted", "eps_basic", "rnd", "sga", "sales_marketing",
        "gna", "interest_expense", "net_interest_income", "weighted_diluted", "weighted_basic"),
    "balance sheet": (
        "total_assets", "current_assets", "total_liabilities", "current_liabilities", "liabilities_and_equity",
        "equity", "cash", "inventory", "receivables", "payables", "goodwill", "ppe", "retained_earnings",
        "deferred_revenue", "long_term_debt", "ltd_current", "total_debt"),
    "cash flow statement": (
        "operating_cash_flow", "investing_cash_flow", "financing_cash_flow", "capex", "dividends_paid", "buybacks",
        "dna", "sbc", "income_taxes_paid", "acquisitions_paid", "fx_effect_on_cash"),
}

STATEMENT_BY_METRIC = {key: name for name, keys in STATEMENT_METRICS.items() for key in keys}


def metric_statements(metric_: Metric) -> list[str]:
    """The primary statements that print a metric, or its inputs when it is computed."""
    own = STATEMENT_BY_METRIC.get(metric_.key)
    if own:
        return [own]
    out: list[str] = []
    for op in (metric_.derive, metric_.fallback):
        for key in (op or ())[1:]:
            for name in metric_statements(METRIC_BY_KEY[key]):
                if name not in out:
                    out.append(name)
    return out


