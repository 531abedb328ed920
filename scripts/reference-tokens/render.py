#!/usr/bin/env python3
"""Step 2 of the reference token counts (see README.md): renders every
conversation of cases.json with Python Jinja2 the way Hugging Face
transformers' apply_chat_template does, and writes the rendered prompts as JSON.

    python3 scripts/reference-tokens/render.py "$W/cases.json" > "$W/rendered.json"

The Jinja environment is transformers' `_compile_jinja_template`
(src/transformers/utils/chat_template_utils.py): an ImmutableSandboxedEnvironment
with trim_blocks, lstrip_blocks and the loopcontrols extension (its
AssistantTracker only adds a `{% generation %}` tag, which these templates do
not use), its own `tojson` (ensure_ascii=False, no HTML escaping, indent etc.),
and the globals `raise_exception` and `strftime_now`. The template is rendered
as apply_chat_template does: messages, tools (None when there are none),
documents=None, add_generation_prompt=True, and the tokenizer's special tokens
map (bos_token, eos_token, unk_token, sep_token, pad_token, cls_token,
mask_token, additional_special_tokens: those the config sets).

Every file read is checked against the version and SHA-256 ctxsim pins
(src/tokens/open-weights.ts, carried in cases.json); transformers is not
needed (PyPI is unreachable where this was written), only Jinja2.
"""

import hashlib
import json
import os
import re
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SPECIAL_TOKENS_ATTRIBUTES = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token", "additional_special_tokens"]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def read_pinned(f):
    """The bytes of a pinned package file, after checking its version and SHA-256."""
    root = os.path.join(ROOT, "node_modules", f["package"])
    with open(os.path.join(root, "package.json"), encoding="utf-8") as p:
        version = json.load(p)["version"]
    if version != f["version"]:
        sys.exit(f"{f['package']} is at {version}, expected {f['version']} (npm install {f['package']}@{f['version']})")
    path = os.path.join(root, f["file"])
    with open(path, "rb") as h:
        data = h.read()
    if sha256(data) != f["sha256"]:
        sys.exit(f"{path} has SHA-256 {sha256(data)}, expected {f['sha256']}")
    return path, data


JS_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def unescape_js(body):
    """The text of a JavaScript string literal's body."""

    def one(m):
        e = m.group(1)
        if len(e) > 1:
            return chr(int(e[2:-1] if e[1] == "{" else e[1:], 16))
        return JS_ESCAPES.get(e, e)

    return re.sub(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", one, body, flags=re.S)


def entry_template(source, entry):
    """The `gguf:` string literal following `model: "<entry>",` in a TypeScript source (Ollama's template automap)."""
    at = source.index("model: " + json.dumps(entry) + ",")
    m = re.compile(r"gguf:\s*(['\"])((?:\\.|(?!\1)[^\\])*)\1", re.S).search(source, at)
    return unescape_js(m.group(2))


def template_of(t):
    if "text" in t:  # a template ctxsim carries in its source (no package ships it)
        if sha256(t["text"].encode("utf-8")) != t["templateSha256"]:
            sys.exit(f"the template ctxsim carries ({t['origin']}) is not the pinned one")
        return t["text"]
    _, data = read_pinned(t)
    text = data.decode("utf-8")
    template = json.loads(text)["chat_template"] if t.get("entry") is None else entry_template(text, t["entry"])
    if sha256(template.encode("utf-8")) != t["templateSha256"]:
        sys.exit(f"the template of {t['package']} {t['file']} {t.get('entry') or ''} is not the pinned one")
    return template


def special_tokens_map(config):
    """The special tokens transformers passes to the template: each attribute the config sets, as its text."""
    out = {}
    for key in SPECIAL_TOKENS_ATTRIBUTES:
        v = config.get(key)
        if isinstance(v, dict):
            v = v.get("content")
        if isinstance(v, list):
            v = [x.get("content") if isinstance(x, dict) else x for x in v]
            if not v:
                continue
        if v is not None:
            out[key] = v
    return out


def compile_template(template):
    """transformers' _compile_jinja_template, without its AssistantTracker (no template here has `{% generation %}`)."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(template)


def openai_shape(m, arguments_as):
    """A ctxsim Message (toolCalls with JSON-text arguments, toolCallId) as a Python caller hands it to apply_chat_template."""
    out = {"role": m["role"], "content": m["content"]}
    if m.get("toolCalls"):
        # DeepSeek's template renders calls only when content is None; Qwen3's cannot read None.
        if arguments_as == "string" and not m["content"]:
            out["content"] = None
        out["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"] if arguments_as == "string" else json.loads(c["arguments"])}}
            for c in m["toolCalls"]
        ]
    if "toolCallId" in m:
        out["tool_call_id"] = m["toolCallId"]
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as h:
        cases = json.load(h)
    out = {"jinja2": jinja2.__version__, "families": {}}
    for name, family in cases["families"].items():
        source = family["source"]
        if "format" in source["template"]:  # a format ctxsim lays out in code (DeepSeek-V3.2): its reference is dsv32.py
            continue
        tokenizer_path, _ = read_pinned(source["tokenizer"])
        if "config" in source:
            _, config_bytes = read_pinned(source["config"])
            specials = special_tokens_map(json.loads(config_bytes))
        else:  # no tokenizer_config.json: the source names BOS and EOS
            specials = {"bos_token": source["bos"], "eos_token": source["eos"]}
        compiled = compile_template(template_of(source["template"]))
        rendered = []
        for case in family["cases"]:
            messages = [openai_shape(m, family["argumentsAs"]) for m in case["messages"]] if case.get("ctxsim") else case["messages"]
            try:
                text = compiled.render(messages=messages, tools=case["tools"] or None, documents=None, add_generation_prompt=True, **specials)
            except Exception as e:  # a template's raise_exception, or Python refusing what the template does
                sys.exit(f"{name} {case['id']}: {type(e).__name__}: {e}")
            rendered.append({**case, "rendered": text})
        out["families"][name] = {"source": source, "argumentsAs": family["argumentsAs"], "tokenizerPath": os.path.relpath(tokenizer_path, ROOT), "cases": rendered, "texts": family["texts"]}
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
