"""Override orders in other languages: an imperative "ignore / forget / disregard" with
"your (previous) instructions / rules" as its object, in 22 languages.

Like the multilingual password keywords of secret_context.py, this is a lexicon, not a
translator: each language gives the imperative forms of the override verbs (never the
past tense: "olvidé las instrucciones en casa" is a story, not an order) and the nouns
for instructions, rules and guidelines. A finding needs both in one clause, in either
order (Japanese, Korean and Turkish put the verb last), at most 40 characters apart.
What it cannot read: a paraphrase without these words, another alphabet's
transliteration, a language not listed.
"""

from __future__ import annotations

import re

__all__ = ["LEXICON_RULE", "override_in_other_languages"]

LEXICON_RULE = "override-multilingual"

# language: (imperative override verbs, nouns for instructions / rules / guidelines)
_LEXICON: dict[str, tuple[str, str]] = {
    "fr": (r"ignore[zs]?|oublie[zs]?|ne tiens pas compte d|ne tenez pas compte d|"
           r"fais abstraction d|faites abstraction d|n'ob[ée]is plus|outrepasse[zs]?",
           r"instructions?|consignes?|r[èe]gles?|directives?|prompt syst[èe]me"),
    "es": (r"ignora|ignore[ns]?|olvida|olvide[ns]?|haz caso omiso|omite|descarta|no sigas|"
           r"no obedezcas",
           r"instrucciones|[óo]rdenes|reglas|normas|directrices|indicaciones"),
    "pt": (r"ignore|ignora|esque[çc]a|esque[çc]e|desconsidere|desconsidera|n[ãa]o siga",
           r"instru[çc][õo]es|regras|diretrizes|orienta[çc][õo]es"),
    "it": (r"ignora|ignorate|dimentica|dimenticate|non seguire|trascura",
           r"istruzioni|regole|direttive|linee guida|indicazioni"),
    "de": (r"ignorier(?:e|t)?|vergiss|vergesst|vergessen sie|missachte|beachte nicht|"
           r"befolge nicht|setze (?:dich )?über",
           r"anweisungen|anweisung|regeln|richtlinien|vorgaben|instruktionen|befehle"),
    "nl": (r"negeer|vergeet|volg niet", r"instructies|regels|richtlijnen|aanwijzingen"),
    "sv": (r"ignorera|glöm|strunta i", r"instruktioner(?:na)?|regler(?:na)?|riktlinjer(?:na)?"),
    "no": (r"ignorer|glem", r"instruksjoner(?:ne)?|regler(?:ne)?|retningslinjer(?:ne)?"),
    "da": (r"ignorer|glem", r"instruktioner(?:ne)?|regler(?:ne)?|retningslinjer(?:ne)?"),
    "fi": (r"ohita|unohda|älä noudata", r"ohjeet|ohjeita|säännöt|sääntöjä"),
    "pl": (r"zignoruj|ignoruj|zapomnij|nie przestrzegaj",
           r"instrukcj[eai]|polece[nń]|zasad[yę]?|regu[łl]"),
    "cs": (r"ignoruj|zapome[nň]|nedodržuj", r"instrukce|pokyny|pravidla"),
    "hu": (r"hagyd figyelmen kívül|felejtsd el|ne kövesd", r"utasítás\w*|szabály\w*"),
    "tr": (r"yok say|görmezden gel|unut|uyma", r"talimatlar\w*|kurallar\w*|yönergeler\w*"),
    "ru": (r"игнорируй(?:те)?|забудь(?:те)?|не обращай(?:те)? внимания на|не следуй(?:те)?|"
           r"проигнорируй(?:те)?|отбрось(?:те)?",
           r"инструкци\w*|правил\w*|указани\w*|директив\w*|ограничени\w*"),
    "uk": (r"ігноруй(?:те)?|забудь(?:те)?|не виконуй(?:те)?", r"інструкці\w*|правил\w*|вказівк\w*"),
    "ar": (r"تجاهل|انس|لا تتبع", r"التعليمات|تعليمات|القواعد|الإرشادات"),
    "he": (r"התעלם|שכח", r"מההוראות|ההוראות|הוראות|הכללים|מהכללים"),
    "hi": (r"अनदेखा करो|अनदेखा करें|भूल जाओ|भूल जाइए|नज़रअंदाज़ करो", r"निर्देशों|निर्देश|नियमों|नियम"),
    "vi": (r"bỏ qua|quên|phớt lờ|đừng tuân theo", r"hướng dẫn|chỉ dẫn|quy tắc|chỉ thị"),
    "id": (r"abaikan|lupakan|jangan ikuti", r"instruksi|petunjuk|aturan|perintah"),
    # Chinese, Japanese and Korean are written without spaces: the verb and the noun may
    # touch ("忽略之前的所有指令").
    "zh": (r"忽略|忽视|无视|無視|忘记|忘記|忘掉|不要遵守|不要理会|別理|别理",
           r"指令|指示|说明|說明|规则|規則|提示词|提示詞|设定|設定|约束|約束"),
    "ja": (r"無視して|無視しろ|無視せよ|無視してください|忘れて|忘れろ|従わないで",
           r"指示|命令|ルール|規則|指令|プロンプト"),
    "ko": (r"무시하고|무시해|무시하세요|무시하십시오|잊어|잊어버려|따르지 마",
           r"지시|지침|규칙|명령|프롬프트"),
}

_GAP = r"[^.!?。！？\n]{0,40}?"
# Languages whose object comes before the verb ("前の指示を無視して", "talimatları yok say").
_VERB_LAST = frozenset({"ja", "ko", "tr", "hi"})
# Scripts written without spaces: no word edge to look for.
_UNSPACED = frozenset({"zh", "ja", "ko"})


def _compile() -> re.Pattern[str]:
    parts: list[str] = []
    for language, (verbs, nouns) in _LEXICON.items():
        edge = "" if language in _UNSPACED else r"(?<!\w)"
        if language in _VERB_LAST:
            parts.append(rf"{edge}(?:{nouns}){_GAP}(?:{verbs})")
        else:
            parts.append(rf"{edge}(?:{verbs}){_GAP}(?:{nouns})")
    return re.compile("(?i)(?:" + "|".join(parts) + ")")


_PATTERN = _compile()


# French and Portuguese share "ignore" and "instructions" with English: an ASCII match
# with English function words is English, which the English rules read (they know that
# "Ignore the instructions in the old wiki" is not an order to the agent).
_ENGLISH = re.compile(r"(?i)\b(?:the|your|all|any|these|those|my|of|in|on|for|about)\b")
# A match made only of words English has too ("ignore this directive", "ignore
# instructions that ...") is English.
_ENGLISH_WORDS = frozenset({
    "ignore", "instructions", "instruction", "directive", "directives", "rules", "rule",
    "prompt", "orders", "this", "that", "simply", "will", "to", "and", "a", "an", "its",
    "their", "such", "every", "some", "it"})


# Words of the listed languages that English does not have: an ASCII match with one of
# them is not English ("Ignore les instructions").
_FOREIGN = re.compile(r"(?i)\b(?:les|tes|vos|toutes|tous|todas|las|los|tus|as|tuas|alle|deine|"
                      r"le|la|del|die|der|und|et|y|e)\b")


def _english(span: str) -> bool:
    if not span.isascii() or _FOREIGN.search(span):
        return False
    words = re.findall(r"[a-z']+", span.lower())
    return bool(_ENGLISH.search(span)) or all(word in _ENGLISH_WORDS for word in words) or (
        bool(words) and words[0] in ("ignore", "ignores") and words[-1] in _ENGLISH_WORDS)


def override_in_other_languages(text: str) -> list[tuple[int, int]]:
    """Spans of an override order in one of the lexicon's languages."""
    return [match.span() for match in _PATTERN.finditer(text) if not _english(match.group(0))]
