"""The injection rules: what an order to the agent looks like, by intent.

Each rule is an intent an attacker needs, not a phrase: override earlier instructions,
claim authority, replace the agent's role, reveal what it holds, send data out, run a
downloaded program, call a tool, act covertly, or plant an order for a later session.
The rules run on normalised text (normalize.py), so disguises of spelling are undone
before they are read. Ordinary imperative notes ("Run the following command to rebuild:
make clean && make") give orders to a person and name no agent, no authority and no
secret: they stay active.
"""

from __future__ import annotations

import re

__all__ = ["INJECTION_RULES", "MEDIUM_RULES", "NEEDS"]

_YOU = (r"(?:you|the (?:assistant|agent|ai|model|llm|bot|copilot)|assistant|agent|ai|claude|"
        r"chatgpt|gpt|llm|copilot)")
# The agent named as such: a manual's "you" is its reader, an order to "the assistant" is not.
_AGENT = (r"(?:(?:the |dear |hey )?(?:assistant|agent|ai|model|llm|bot|copilot)|claude|chatgpt|"
          r"gpt|llm|copilot)")
_PRIOR = (r"(?:(?:all|any|the|your|of|my|these|those|every)\s+){0,3}(?:previous|prior|above|"
          r"earlier|preceding|former|original|initial|old|system|developer|safety|"
          r"given|current|existing)")
_RULES_WORD = (r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|"
               r"commands|orders|constraints|guardrails|policies|programming|training|"
               r"restrictions|limitations|filters|context|messages)")
_OVERRIDE_VERB = (r"(?:ignore|disregard|forget|override|bypass|discard|abandon|neglect|"
                  r"set aside|put aside|pay no attention to|stop following|do not follow|"
                  r"don't follow|never follow|no longer follow|cancel|nullify|void|skip)")
# Paraphrases of an override: "forget your rules", "disregard guidelines and ...", "ignore
# the instructions above" (no "previous" needed when "your" or "above" says whose).
_PARA_VERB = (r"(?:ignore|disregard|forget(?: about)?|discard|abandon|drop|set aside|put aside|"
              r"throw out|scrap|stop following|stop obeying|no longer follow|do not follow|"
              r"don't follow|never follow|stop listening to)")
_PARA_RULES = (r"(?:instructions?|rules|guidelines|guidance|directives|programming|training|"
               r"restrictions|guardrails|constraints|policies|principles|system prompt|prompts?|"
               r"orders|limits|boundaries|ethics|safety rules)")
_SECRET_THING = (r"(?:system prompt|hidden prompt|initial prompt|developer prompt|"
                 r"(?:system |hidden |original |initial )?instructions|api[ _-]?keys?|secrets?|"
                 r"credentials|passwords?|tokens?|private keys?|ssh keys?|id_rsa|"
                 r"env(?:ironment)? (?:variables|vars|file)|\.env(?: file)?|"
                 r"\.aws/credentials|\.ssh|memories|memory store|conversation history|"
                 r"chat history|session cookies?|cookies|config(?:uration)? files?)")
_TARGET = (r"(?:https?://\S+|\S+@\S+\.\w+|(?:my|this|the following|our|an?|their|that)\s+"
           r"(?:\w+\s+)?(?:server|url|endpoint|webhook|address|email|site|domain|bucket|"
           r"channel|inbox|host|ip|pastebin|gist)|\b(?:attacker|evil|exfil)\S*)")
_SHELL = (r"(?:ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|"
          r"powershell")
_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch|lwp-download)"

_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("ignore-instructions", "order to ignore earlier instructions",
     rf"\b{_OVERRIDE_VERB}\s+(?:\w+\s+){{0,2}}?{_PRIOR}\s+(?:\w+\s+){{0,2}}?{_RULES_WORD}\b"),
    ("ignore-paraphrase", "order to ignore the agent's instructions",
     rf"\b{_PARA_VERB}\s+(?:(?:all|any|every)\s+)?(?:of\s+)?your\s+(?:\w+\s+){{0,2}}?"
     rf"{_PARA_RULES}\b|"
     rf"\b{_PARA_VERB}\s+(?:(?:all|any)\s+)?(?:(?:of\s+)?(?:the|these|those)\s+)?{_PARA_RULES}\s+"
     r"(?:above|before|earlier|so far|previously|from before|you (?:were|have been|'ve been) "
     r"given|given to you|i gave you)\b|"
     rf"(?:^|[.!?:;\n]\s*){_PARA_VERB}\s+(?:all\s+)?{_PARA_RULES}\s*(?:and\b|[,;.!]|$)"),
    ("persistent-order", "order planted for every later session",
     r"\b(?:in|for|during|across)\s+(?:all|every|each|any)\s+(?:future|later|subsequent|"
     r"upcoming|new)\s+(?:sessions?|conversations?|chats?|interactions?|answers?|responses?|"
     r"replies|tasks?)\b|"
     r"\b(?:from now on|going forward|henceforth|permanently|forever),?\s+(?:always\s+)?"
     r"(?:recommend|tell|say|answer|reply|respond|suggest|insist|claim)\b|"
     r"\bwhenever\s+(?:the\s+|a\s+)?user\s+(?:asks?|mentions?|requests?|talks?)\b[^.\n]{0,80}"
     r"\b(?:tell|recommend|say|answer|reply|respond|suggest|insist|claim|direct|point)\b|"
     r"\b(?:remember|store|save|memori[sz]e|keep)\s+(?:this|that|the following)?\s*(?:as|for)\s+"
     r"(?:an?\s+)?(?:permanent|persistent|standing|core|new|global)\s+(?:rule|instruction|"
     r"directive|order|memory|policy)\b|"
     r"\bremember\s*[:,]?\s+(?:that\s+)?(?:you|the (?:assistant|agent|ai|model))\s+(?:must|should|"
     r"shall|will|are to)\s+(?:always|never)\b|"
     r"(?:^|[.!?:\n]\s*)(?:always|never)\s+(?:recommend|tell the user|say|answer|suggest|reply|"
     r"respond|insist)\b"),
    ("ignore-everything", "order to ignore earlier instructions",
     r"\b(?:ignore|disregard|forget) (?:everything|all|anything|what)(?: (?:that|which))? "
     r"(?:you (?:were|have been|'ve been) (?:told|given|instructed)|(?:was |is )?(?:said |"
     r"written |stated )?(?:above|before|earlier|so far|previously))"),
    ("void-instructions", "claim that earlier instructions no longer apply",
     rf"\b{_PRIOR}\s+{_RULES_WORD}\s+(?:are|were|have been|is)\s+(?:now\s+)?(?:void|null|"
     r"obsolete|cancell?ed|revoked|outdated|superseded|no longer (?:valid|apply|in effect)|"
     r"fake|wrong|a test|lifted|disabled|removed)"),
    ("new-identity", "attempt to replace the agent's role",
     rf"\b(?:from now on,?\s+{_YOU}\s+(?:are|will|must|shall|should)|{_YOU}\s+(?:are|is)\s+"
     r"now\s+(?:in\s+)?(?:an?\s+)?(?:dan\b|developer mode|jailbroken|unrestricted|unfiltered|"
     r"free of|no longer bound|evil|uncensored|without (?:any )?(?:rules|restrictions|limits))|"
     r"(?:enter|enable|activate|switch to|turn on)\s+(?:developer|god|jailbreak|dan|"
     r"unrestricted)\s+mode|"
     r"(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|"
     r"unfiltered|jailbroken|uncensored|evil|rogue)|pretend\s+(?:that\s+)?(?:you\s+(?:are|have)|"
     r"to\s+be)\s+[^.\n]{0,40}(?:no|without)\s+(?:rules|restrictions|limits|filters|guidelines))"),
    ("new-task", "injected replacement task",
     r"\byour\s+(?:new|real|actual|true|only|primary|updated)\s+(?:task|instructions?|goal|"
     r"objective|role|mission|job|purpose|directive)\s+(?:is|are|will be|:)"),
    ("new-instructions", "injected instructions header",
     r"(?:^|\n)\s*(?:[#>*\-\[(]+\s*)?(?:new|updated|real|actual|hidden|secret|important|"
     r"urgent|override|priority|revised|additional|mandatory)\s+(?:system\s+|admin\s+|"
     r"developer\s+)?(?:instructions?|directives?|orders|prompt|rules)\s*[:\])\-]"),
    ("authority-claim", "claim of authority over the agent",
     r"\b(?:this is|i am|i'm|we are|message from|sent by|on behalf of|speaking as|signed,?)\s+"
     r"(?:(?:a|an|the|your)\s+)?(?:system|sys ?admin(?:istrator)?|administrator|admin|root|"
     r"developer|operator|owner|creator|maker|anthropic|openai|security team|it department|"
     r"platform team|trust and safety|moderator)\b(?:[^.\n]{0,80}?)\b(?:you\s+(?:\w+\s+)?"
     r"(?:must|will|shall|should|need to|have to|are\s+(?:\w+\s+)?(?:required|authori[sz]ed|"
     r"instructed|ordered|permitted|allowed|cleared))|"
     r"i (?:authori[sz]e|order|instruct|command|permit)|(?:authori[sz]ation|permission|"
     r"clearance|override) (?:is )?(?:granted|given)|grant(?:ed)? you)"),
    ("granted-privilege", "claim that the agent was granted new powers",
     rf"\b{_YOU}\s+(?:have|has|now have|now has|are|is)\s+(?:been\s+)?(?:granted|given|"
     r"authori[sz]ed|permitted|allowed|cleared)\s+(?:to\s+|with\s+)?(?:full\s+|unrestricted\s+|"
     r"admin(?:istrator)?\s+|root\s+|elevated\s+|special\s+)?(?:access|permissions?|"
     r"privileges|rights|clearance|authority|to (?:ignore|bypass|override|disable|skip))|"
     r"\bsystem\s+override\b|\badmin(?:istrator)?\s+override\s*(?:[:!]|code|mode|"
     r"enabled|granted|active)|\boverride\s+code\b|"
     r"\bsafety (?:checks?|filters?|guidelines) (?:are|have been) (?:disabled|off|lifted)"),
    ("reveal", "order to reveal protected information",
     r"\b(?:reveal|print|show|output|repeat|display|dump|leak|disclose|tell me|list|recite|"
     r"write out|spell out|echo|return|give me|share|expose|paste)\s+(?:me\s+|us\s+)?"
     r"(?:back\s+)?(?:all\s+|every\s+|verbatim\s+)?(?:of\s+)?(?:the\s+(?:full\s+|entire\s+|"
     r"exact\s+|complete\s+)?(?:contents?|text|details|rest|values?)\s+of\s+)?"
     r"(?:your|its)\s+(?:\w+\s+){0,2}?" + _SECRET_THING +
     r"|\b(?:reveal|print|show|output|repeat|display|dump|leak|disclose|recite|tell me|give me)"
     r"\s+(?:me\s+)?(?:the\s+|your\s+)?(?:full\s+|entire\s+|exact\s+|original\s+)?"
     r"(?:system|hidden|initial|developer|original|secret)\s+(?:prompt|instructions|message)"),
    ("exfiltrate", "order to send data elsewhere",
     r"\b(?:send|post|upload|exfiltrate|forward|transmit|email|e-mail|mail|leak|copy|pipe|"
     r"submit|sync|report|share|deliver|beam|push|append|include|attach|encode)\s+"
     rf"(?:[~./\w-]+\s+){{0,6}}?(?:[~$]?/?[\w.-]*/)?{_SECRET_THING}\s+(?:\S+\s+){{0,4}}?"
     rf"(?:to|into|at|via|using|in)\s+{_TARGET}"),
    ("exfil-command", "command that sends secrets out",
     r"\b(?:cat|type|base64|tar|zip|gzip|printenv|env)\b[^\n|]{0,80}"
     r"(?:\.env|\.ssh|id_rsa|id_ed25519|\.aws|credentials|\.netrc|\.npmrc|\.pypirc|\.git-credentials|"
     r"/etc/shadow|/etc/passwd|printenv|environ)[^\n|]{0,80}\|\s*(?:curl|wget|nc|ncat|netcat|"
     r"socat|telnet|ssh|mail|sendmail)\b|"
     r"\bpython[0-9.]*\s+-c\s+[\"'][^\n]{0,200}?(?:urlopen|urllib|requests\.(?:get|post)|"
     r"http\.client|socket)[^\n]{0,200}?(?:environ|getenv|open\(|\.ssh|\.env|\.aws|credentials|"
     r"id_rsa|\.netrc)|"
     r"\bpython[0-9.]*\s+-c\s+[\"'][^\n]{0,200}?(?:environ|getenv|open\(|\.ssh|\.env|\.aws|"
     r"credentials|id_rsa|\.netrc)[^\n]{0,200}?(?:urlopen|urllib|requests\.(?:get|post)|"
     r"http\.client|socket)|"
     r"\b(?:curl|wget)\b[^\n]{0,120}(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|"
     r"-T|--upload-file|--post-file)\s*[\"']?@?[\"']?(?:~|\$HOME|/root|/home/\w+)?/?"
     r"(?:\.env|\.ssh/\S+|\.aws/\S+|\.netrc|\.npmrc|\.git-credentials|/etc/shadow|"
     r"\S*id_rsa|\S*credentials)"),
    ("exfil-image", "markdown image that carries data out",
     r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][^)\s]*=(?:[^)\s]*\{|[^)\s]*\$|[^)\s]*%7B|"
     r"[^)\s]*\b(?:secret|token|key|password|data|q|d)\b|(?-i:[A-Z][A-Z_]{3,})\b|[^)\s]*<|"
     r"[^)\s]*\b(?:conversation|history|summary|memor(?:y|ies)|chat|env|creds?|credentials|"
     r"session|prompt)\b)|"
     r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&](?:conversation|history|summary|memor(?:y|ies)|"
     r"chat|env|creds?|credentials|session|prompt|secrets?|keys?)=|"
     r"!\[[^\]]*\]\(\s*https?://[^)\s]*/(?:(?-i:[A-Z][A-Z_]{3,})\)|<[^>)]{3,}>|"
     r"\[[^\])]{3,}\])"),
    ("run-command", "order to the agent to run commands",
     rf"\b{_AGENT}\b[^.\n]{{0,40}}\b(?:must|should|will|shall|need to|have to|are to|is to)\s+"
     r"(?:now\s+|immediately\s+|silently\s+|quietly\s+|always\s+)?(?:run|execute|"
     r"eval(?:uate)?|invoke|call)\b|"
     r"\byou\b[^.\n]{0,40}\b(?:must|should|will|shall|need to|have to|are to)\s+"
     r"(?:now|immediately|silently|quietly|secretly)\s+(?:run|execute|eval(?:uate)?|invoke|"
     r"call)\b|\b(?:run|execute)\s+(?:this|the following|these)\s+(?:\w+\s+)?(?:commands?|"
     r"code|script|payload)\s+(?:without|silently|immediately|now|before (?:answering|"
     r"responding|replying))"),
    ("shell-payload", "download-and-run or destructive shell command",
     rf"\b{_FETCH}\b[^\n|;]*\|\s*(?:sudo\s+(?:-\w+\s+)?)?(?:{_SHELL})\b|"
     rf"\b(?:{_SHELL})\s+(?:-c\s+)?[\"']?\s*(?:<\(|\$\()\s*{_FETCH}\b|"
     rf"\b(?:{_SHELL})\s+-c\s+[\"'][^\"'\n]*{_FETCH}\b|"
     rf"\b{_FETCH}\b[^\n]{{0,160}}?(?:-o|-O|--output)\s*\S+[^\n]{{0,80}}?(?:&&|;)\s*"
     r"(?:chmod\s+\+?[0-7x]+\s+\S+\s*(?:&&|;)\s*)?(?:\./|/tmp/|sh\s|bash\s)|"
     r"\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,40}\|\s*(?:ba|z)?sh\b|"
     r"\b(?:powershell|pwsh)(?:\.exe)?\s+[^\n]{0,40}-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{20,}|"
     r"\biex\s*\(\s*(?:new-object\s+net\.webclient|iwr|irm|invoke-webrequest)|"
     r"\bimport\s+urllib[^\n]{0,120}exec\(|\bexec\(\s*(?:urllib|requests)\.|"
     r"\brm\s+-(?:rf|fr)\s+(?:--no-preserve-root\s+)?(?:/|~|\$HOME|/\*)(?:\s|$)|"
     r"\b(?:nc|ncat|netcat)\s+(?:-\w+\s+)*-e\s+/bin/(?:ba)?sh|"
     r"/dev/tcp/\S+/\d+|\bmkfifo\b[^\n]{0,60}\bnc\b"),
    ("covert", "order to act without the user knowing",
     r"\b(?:without (?:telling|asking|informing|notifying|alerting|letting|warning|"
     r"mentioning (?:it|this) to) (?:the )?(?:user|human|operator|anyone|them|him|her|me|"
     r"the person)|(?:do not|don't|never) (?:tell|inform|notify|alert|warn|let) "
     r"(?:the )?(?:user|human|operator|person|owner)|(?:do not|don't|never) (?:mention|"
     r"reveal|disclose|reference|acknowledge) (?:this|these|that you|the (?:above|following)) "
     r"(?:instructions?|message|note|memory|to the user)|keep (?:this|it) (?:secret|hidden) "
     r"from (?:the )?(?:user|human))"),
    ("future-order", "order planted for a later session",
     rf"\b(?:when(?:ever)?|next time|each time|every time|once|after)\s+{_YOU}\s+"
     r"(?:next\s+)?(?:read|reads|see|sees|recall|recalls|retrieve|retrieves|load|loads|"
     r"encounter|encounters|process|processes|find|finds)\s+(?:this|these|that)\b"
     r"[^.\n]{0,80}?\b(?:must|should|always|never|will|shall|do|run|send|say|tell|ignore|"
     r"recommend|reply|respond|open|visit|execute)"),
    ("tool-call-json", "tool-call JSON aimed at the agent",
     r"\{\s*\"(?:tool|tool_name|toolName|function|function_name|name|action|recipient_name)"
     r"\"\s*:\s*\"[^\"]{1,80}\"\s*,\s*\"(?:arguments|args|parameters|params|input|"
     r"tool_input|action_input|kwargs)\"\s*:|\"method\"\s*:\s*\"tools/call\"|"
     r"\"type\"\s*:\s*\"(?:tool_use|function_call|tool_call)\"\s*,\s*\"(?:name|id|"
     r"function)\""),
    ("chat-markup", "chat template markup",
     r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|"
     r"end_header_id|begin_of_text)\|>|\[/?INST\]|<<SYS>>|<</SYS>>|"
     r"(?:^|\n)\s*#{2,}\s*(?:system|instruction|assistant)\s*(?:message|prompt)?\s*:?\s*(?:\n|$)"),
    ("tool-markup", "tool-call markup",
     r"</?(?:tool_call|tool_use|function_call|function_calls|invoke|antml:[a-z_]+|"
     r"tool_result|system-reminder)\b[^>]*>|</?(?:system|system_prompt|instructions|admin)\s*>|"
     r"\"tool_calls\"\s*:\s*\["),
    ("role-marker", "conversation role marker",
     r"(?:^|\n)\s*(?:system|assistant|human|developer)\s*:\s*\S"),
    ("addressed-order", "order addressed to the agent",
     rf"\b(?:attention|note to|message (?:to|for)|instructions? (?:to|for)|important (?:for|to)|"
     rf"dear|hey|listen,?|reminder (?:to|for))\s+{_YOU}\b[^.\n]{{0,60}}?\b(?:must|should|"
     r"need to|have to|are to|will|ignore|send|reveal|run|execute|delete|do not|don't|always|"
     r"never)\b|"
     rf"(?:^|[.!?:\n]\s*){_AGENT},?\s+(?:you\s+)?(?:must|shall|are required to|"
     r"are instructed to|are ordered to)\s+(?:now\s+)?(?:always|never|obey|comply|execute|run|"
     r"send|reveal|ignore|delete|forward|email|upload|disable|stop|call|output|print)|"
     r"(?:^|[.!?:\n]\s*)you,?\s+(?:must|shall|are required to|are instructed to|are ordered to)"
     r"\s+(?:now\s+)?(?:obey|comply|reveal|ignore|forward|email|upload|disable)\b"),
)

# Letters a rule's match can start with: a lookahead on them lets re skip most positions
# at once (shell-payload scans ~5x faster on a 10 kB text).
_FIRST = {"shell-payload": "cwiflbzdkpnrom/", "exfil-command": "ctbgzpewy",
          "ignore-paraphrase": "idfasptn.!?:;\n", "persistent-order": "ifdagphwrsmkn.!?:\n",
          "exfiltrate": "spuefthmlcrdbai",
          "authority-claim": "tiwmso", "future-order": "wneoa"}

INJECTION_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (rule, label, re.compile(
        f"(?=[{_FIRST[rule]}{_FIRST[rule].upper()}])(?:{pattern})" if rule in _FIRST else pattern,
        re.IGNORECASE,
    ))
    for rule, label, pattern in _PATTERNS
)


# Words each rule needs (lower-cased) before its pattern is run: screening stays cheap.
NEEDS: dict[str, tuple[str, ...]] = {
    "ignore-instructions": ("ignore", "disregard", "forget", "override", "bypass", "discard",
                            "abandon", "neglect", "aside", "attention", "follow", "cancel",
                            "nullify", "void", "skip"),
    "ignore-paraphrase": ("ignore", "disregard", "forget", "discard", "abandon", "drop",
                          "aside", "throw out", "scrap", "follow", "obey", "listening"),
    "persistent-order": ("future", "later", "subsequent", "upcoming", "new ", "from now on",
                         "going forward", "henceforth", "permanently", "forever", "whenever",
                         "remember", "store", "save", "memori", "keep", "always", "never"),
    "ignore-everything": ("ignore", "disregard", "forget"),
    "void-instructions": ("void", "null", "obsolete", "cancel", "revoked", "outdated",
                          "superseded", "no longer", "fake", "wrong", "a test", "lifted",
                          "disabled", "removed"),
    "new-identity": ("from now on", " now ", "mode", " as ", "pretend"),
    "new-task": ("your ",),
    "new-instructions": ("instruction", "directive", "orders", "prompt", "rules"),
    "authority-claim": ("this is", "i am", "i'm", "we are", "message from", "sent by",
                        "behalf", "speaking as", "signed"),
    "granted-privilege": ("grant", "given", "authori", "permitted", "allowed", "cleared",
                          "override", "safety"),
    "reveal": ("reveal", "print", "show", "output", "repeat", "display", "dump", "leak",
               "disclose", "tell me", "list", "recite", "write out", "spell out", "echo",
               "return", "give me", "share", "expose", "paste"),
    "exfiltrate": (" to ", " into ", " at ", " via ", " using ", " in "),
    "exfil-command": ("|", "curl", "wget", "python"),
    "exfil-image": ("](",),
    "run-command": ("run", "execute", "eval", "invoke", "call"),
    "shell-payload": ("curl", "wget", "iwr", "irm", "invoke-", "fetch", "lwp-", "base64",
                      "powershell", "pwsh", "iex", "urllib", "exec(", "rm ", "nc ", "ncat",
                      "netcat", "/dev/tcp", "mkfifo"),
    "covert": ("without", "do not", "don't", "never", "keep "),
    "future-order": ("when", "next time", "each time", "every time", "once", "after"),
    "tool-call-json": ('"',),
    "chat-markup": ("<|", "inst]", "<<sys>>", "<</sys>>", "##"),
    "tool-markup": ("<", "tool_calls"),
    "role-marker": (":",),
    "addressed-order": ("attention", "note to", "message", "instruction", "important", "dear",
                        "hey", "listen", "reminder", "must", "shall", "required", "ordered"),
}

# Rules that stay medium: a role marker is common in pasted transcripts.
MEDIUM_RULES = frozenset({"role-marker"})
