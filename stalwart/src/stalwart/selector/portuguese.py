"""The Portuguese grammar, and how a turn's language is told (an agent's choice).

An agent reads English alone unless its agent.yaml says ``languages: [english,
portuguese]`` (`languages.py` picks the grammar a turn is read with). This module holds
the Portuguese grammar, as data, as `english.py` holds the English one, and recognises a
turn written in Portuguese.

Clauses
    A turn splits on ``depois``, ``e depois``, ``, depois``, ``então`` (or ``entao``),
    ``;``, ``mas`` and ``, mas``: whole words, case aside, never inside a quoted string. A
    bare ``e`` does not split, as a bare "and" does not in English. "mas" splits so that a
    negation after it is read in its own clause ("bloquear o cartão 4411, mas não
    transferir ...": the clause refused is "não transferir ...").

Moods, as English's (`mood.py` reads them the same way)
    - negators: "não", "nao", "nunca", "jamais", "nem", "sem", "em vez de", ...;
    - conditions: "se", "caso", "a menos que", "só se", "quando", "desde que", "até", ...;
    - questions: "será que" anywhere; at a clause's start a question word ("o que",
      "por que", "como", "qual", "quanto", ...) or a verb that asks ("devo", "posso",
      "deveria", ...); a question mark anywhere outside quotes;
    - hedges: "talvez", "acho que", "quem sabe", "provavelmente", "não sei", ...;
    - choices: "ou";
    - the opposite of the tool a clause names: "cancelar", "desfazer", "estornar",
      "reverter", "anular" (and their imperatives), unless they are the tool's own words;
      a word of its name with "des" before it ("desbloquear" is no bloquear);
    - what was done: a word of the tool's name in the past ("bloqueei", "transferi");
    - when or how much the step would drop: "amanhã", "semanal", "metade", a weekday, ...

Stop words
    Articles, contractions and prepositions ("o", "a", "da", "para", "com", ...) and
    "por favor": they name nothing and may stand between a name and its value.

Stemmer
    snowballstemmer's Portuguese stemmer, with accents folded after stemming, so a word
    typed without them is the same word ("cartao" is "cartão", "transferencia" is
    "transferência").

Numbers
    A comma is the decimal point and a point separates thousands: "25,00", "1.250,00",
    "R$25,00", "R$ 25,00", "€ 25,00", "25,00 reais" (a sign apart from its number is the
    number's: `tokens.py`). A number that is two amounts ("1.250": 1250 here, 1.25 in
    English; "1,250": 1.25 here, 1250 there) is read as neither, and a number written
    as English writes it ("40.00", "1,250.00") is not read, and says why.

Role words
    As in English, a preposition a tool's docstring puts before a parameter's name names
    it in a turn: "Transfere dinheiro de uma origem para um destino" makes "de alice"
    the origem and "para bob" the destino; so does one a declared phrase puts before a
    ``{parameter}`` ("remeter {valor} de {pagador} para {recebedor}": `vocabulary.py`).

Yes and no
    ``sim``/``verdadeiro``/``ligado`` and ``falso``/``desligado`` ("não" is a negator, never
    a no).

How a turn is recognised (`reads_as_portuguese`, `marks`)
    Its words are counted against two lists. Portuguese marks are Portuguese function
    words that are not English words ("o", "da", "para", "depois", "e", ...) and any
    word with a Portuguese diacritic (ã, õ, ç, á, é, ...). English marks are the English
    grammar's stop words and "then", less the words both languages have ("a", "as").
    A turn with at least one Portuguese function word and more Portuguese marks than
    English marks is Portuguese. Quoted strings are values, not the turn's language, and
    are not counted. An agent that reads English alone refuses such a turn whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .grammar import Grammar, Moods
from .tokens import QUOTED, has_quote

_FUNCTION_WORDS_TEXT = """
    o os da das dos na nas ao aos pelo pela pelos pelas numa
    um uma uns umas e ou em para com sem por que depois então entao também tambem
    mais já não nao seu sua seus suas meu minha meus minhas este esta isto esse essa
    isso aquele aquela
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())

DIACRITICS = frozenset("ãõçáéíóúâêôàü")
SHARED_WORDS = frozenset({"a", "as"})

_WORDS = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")  # "e-mail" is one word, not "e"


def words_of(turn: str) -> list[str]:
    """The turn's words, lower-case, less its quoted strings (values, not its language)."""
    lowered = turn.lower()
    return _WORDS.findall(QUOTED.sub(" ", lowered) if has_quote(lowered) else lowered)


def marks(words: Iterable[str]) -> int:
    """How many of these (lower-case) words mark a turn as Portuguese."""
    return sum(1 for w in words if w in FUNCTION_WORDS or not DIACRITICS.isdisjoint(w))


def reads_as_portuguese(turn: str, english_words: frozenset[str]) -> bool:
    """Whether the turn reads as Portuguese rather than as English (`english_words`)."""
    words = words_of(turn)
    if FUNCTION_WORDS.isdisjoint(words):
        return False
    english_marks = english_words - SHARED_WORDS
    return marks(words) > sum(1 for w in words if w in english_marks)


# --- the grammar ---

# As in English (`english.py`): the comma and spaces before a word belong to the separator,
# and the words share one look-behind, so splitting is linear in the turn.
_BEFORE = r"(?:,|(?<![\s,]))\s*"
CLAUSE_SEPARATOR = re.compile(
    rf"{_BEFORE}\b(?:e\s+depois|depois|então|entao|mas)\b|;", re.IGNORECASE
)

_STOP_WORDS_TEXT = """
    o a os as um uma uns umas de do da dos das no na nos nas em ao aos à às
    pelo pela pelos pelas por para pra com que é me te lhe
    meu minha meus minhas seu sua seus suas este esta isto esse essa isso
    favor agora também tambem já ja aqui ali
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def _phrases(text: str) -> frozenset[str]:
    return frozenset(line.strip() for line in text.strip().splitlines())


NEGATORS = _phrases("""
    não
    nao
    nunca
    jamais
    nem
    sem
    em vez de
    ao invés de
    deixe de
    pare de
    esqueça
    esqueca
    nenhum
    nenhuma
""")
CONDITIONALS = _phrases("""
    se
    caso
    a menos que
    salvo se
    só se
    so se
    somente se
    apenas se
    quando
    sempre que
    desde que
    contanto que
    até
    ate
    senão
    senao
""")
QUESTIONS = _phrases("""
    será que
    sera que
""")
HEDGES = _phrases("""
    talvez
    acho que
    quem sabe
    provavelmente
    possivelmente
    não sei
    nao sei
    pode ser
    quiçá
""")
CHOICES = _phrases("""
    ou
""")
REVERSERS = _phrases("""
    cancelar
    cancele
    cancela
    desfazer
    desfaça
    desfaca
    estornar
    estorne
    estorna
    reverter
    reverta
    reverte
    anular
    anule
    anula
    revogar
    revogue
    parar
    pare
    remover
    remova
    apagar
    apague
    recusar
    recuse
""")
PAST_FORMS = _phrases("""
    paguei pagar
    pagou pagar
    fiz fazer
    fez fazer
    mandei mandar
    enviei enviar
    transferi transferir
    transferiu transferir
""")
_QUALIFIERS_TEXT = """
    amanhã amanha hoje ontem próximo proximo próxima proxima todo toda todos todas cada
    diário diario diária diaria semanal mensal anual metade dobro
    semana mês mes ano dia manhã manha tarde noite
    segunda terça terca quarta quinta sexta sábado sabado domingo
"""
QUALIFIERS = frozenset(_QUALIFIERS_TEXT.split())
_QUESTION_OPENERS = _phrases("""
    o que
    que
    por que
    porque
    por quê
    como
    qual
    quais
    quem
    onde
    quanto
    quanta
    quantos
    quantas
    devo
    deveria
    devemos
    posso
    podemos
    será
    sera
    é
""")
FILLERS = frozenset({"ok", "bem", "olá", "ola", "oi", "e", "agora", "bom", "então", "entao"})

MOODS = Moods(
    negators=NEGATORS,
    conditionals=CONDITIONALS,
    questions=QUESTIONS,
    hedges=HEDGES,
    question_openers=_QUESTION_OPENERS,
    fillers=FILLERS,
    question_marks="?",
    reversers=REVERSERS,
    negating_prefixes=frozenset({"des"}),
    choices=CHOICES,
    past_endings=frozenset({"ei", "i", "ou"}),
    past_forms=PAST_FORMS,
    qualifiers=QUALIFIERS,
)

# Digits, or groups of three after the first with a point between ("1.250.000").
_WHOLE = r"[+-]?(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)"

GRAMMAR = Grammar(
    language="portuguese",
    clause_separator=CLAUSE_SEPARATOR,
    stop_words=STOP_WORDS,
    true_words=frozenset({"sim", "verdadeiro", "ligado"}),
    false_words=frozenset({"falso", "desligado"}),
    integer=re.compile(_WHOLE),
    decimal=re.compile(rf"{_WHOLE},[0-9]+"),
    number_marks="#$€£",
    number_prefixes=("R$",),  # "R$25,00": the real's sign
    decimal_point=",",
    thousands_separator=".",
    # "1.250" is 1250 here and 1.25 in English; "1,250" is 1.25 here and 1250 there.
    ambiguous_number=re.compile(r"[+-]?[1-9][0-9]{0,2}[,.][0-9]{3}"),
    # A decimal written as English writes it ("40.00", "1,250.00"): no number here. A
    # version or an address ("1.2.3", "10.0.0.1") is no such number, and stays a value.
    malformed_number=re.compile(r"[+-]?[0-9]+(?:,[0-9]{3})*\.[0-9]+"),
    number_hint="a comma is the decimal point, as in 1.250,00",
    moods=MOODS,
    role_words=frozenset(
        ["de", "do", "da", "para", "pra", "em", "no", "na", "com", "por", "pelo", "pela", "ao"]
    ),
    articles=frozenset(["o", "a", "os", "as", "um", "uma", "seu", "sua", "meu", "minha"]),
    currency_words=frozenset(["reais", "real", "brl", "eur", "euros", "euro", "usd", "dólares"]),
    fold_accents=True,
)
