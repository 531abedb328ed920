#!/usr/bin/env python3
"""The reference token counts of the DeepSeek-V3.2 formats (see README.md):
renders every conversation of cases.json for `deepseek-v3.2` and
`deepseek-v3.2-thinking` with DeepSeek's own encoder, `encoding_dsv32.py`
from the model repository's `encoding/` folder (given as ENCODING_DIR, not
part of ctxsim), counts each prompt and plain text with Hugging Face's
`tokenizers` (Python, the Rust core), and writes
test/fixtures/tokens/open-weights/<name>.json as count.mjs does.

    python3 scripts/reference-tokens/dsv32.py ENCODING_DIR "$W/cases.json"

A prompt is rendered as DeepSeek's API renders a chat-completions request:
`encode_messages(messages, thinking_mode="chat"|"thinking")`, the request's
tools on its first message when that is a system message, else on an empty
system message put first. The tokenizer is V3's pinned tokenizer.json with
the added tokens ctxsim gives V3.2 (`<think>`, `</think>`, `｜DSML｜`: one
token each, as DeepSeek's bills count them).
"""

import copy
import importlib.util
import json
import os
import sys

from tokenizers import AddedToken, Tokenizer, __version__ as TOKENIZERS_VERSION

from render import ROOT, read_pinned, sha256


def request_shape(m):
    """A ctxsim Message as a chat-completions request carries it (arguments as the model's JSON text)."""
    out = {"role": m["role"], "content": m["content"]}
    if m.get("toolCalls"):
        out["tool_calls"] = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in m["toolCalls"]]
    if "toolCallId" in m:
        out["tool_call_id"] = m["toolCallId"]
    return out


def with_tools(messages, tools):
    """The request's tools on its first message when it is a system message, else on an empty one put first."""
    messages = copy.deepcopy(messages)
    if tools:
        if not messages or messages[0]["role"] != "system":
            messages.insert(0, {"role": "system", "content": ""})
        messages[0]["tools"] = tools
    return messages


def main():
    encoding_dir, cases_path = sys.argv[1], sys.argv[2]
    encoder_path = os.path.join(encoding_dir, "encoding_dsv32.py")
    with open(encoder_path, "rb") as h:
        encoder_sha = sha256(h.read())
    spec = importlib.util.spec_from_file_location("encoding_dsv32", encoder_path)
    enc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(enc)
    with open(cases_path, encoding="utf-8") as h:
        families = json.load(h)["families"]
    out_dir = os.path.join(ROOT, "test", "fixtures", "tokens", "open-weights")
    for name, family in families.items():
        source = family["source"]
        template = source["template"]
        if template.get("format") != "deepseek-v3.2":
            continue
        tokenizer = Tokenizer.from_file(read_pinned(source["tokenizer"])[0])
        tokenizer.add_tokens([AddedToken(a["content"], special=False, normalized=False) for a in source["addedTokens"]])
        mode = "thinking" if template["thinking"] else "chat"
        count = lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)
        cases = []
        for c in family["cases"]:
            messages = [request_shape(m) for m in c["messages"]] if c.get("ctxsim") else c["messages"]
            try:
                text = enc.encode_messages(with_tools(messages, c["tools"]), thinking_mode=mode)
            except Exception as e:  # what the encoder refuses
                sys.exit(f"{name} {c['id']}: {type(e).__name__}: {e}")
            case = {"id": c["id"], **({"ctxsim": True} if c.get("ctxsim") else {}), "messages": c["messages"], "tools": c["tools"]}
            cases.append({**case, "renderedSha256": sha256(text.encode("utf-8")), "tokens": count(text)})
        texts = [[t, count(t)] for t in family["texts"]]
        head = {
            "generatedBy": "scripts/reference-tokens (cases.mjs, dsv32.py): do not edit, regenerate as its README.md says",
            "name": name,
            "files": source,
            "generator": {
                "renderer": f"DeepSeek-V3.2's encoding_dsv32.py (SHA-256 {encoder_sha}), encode_messages(thinking_mode={mode!r})",
                "tokenizer": f"Hugging Face tokenizers {TOKENIZERS_VERSION} (Rust core, Python binding), add_special_tokens false",
            },
        }
        lines = json.dumps(head, ensure_ascii=False, indent=1)[:-2].split("\n")
        lines += [",", ' "cases": [', ",\n".join("  " + json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases), " ],"]
        lines += [' "texts": [', ",\n".join("  " + json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in texts), " ]", "}"]
        with open(os.path.join(out_dir, f"{name}.json"), "w", encoding="utf-8") as h:
            h.write("\n".join(lines).replace("\n,\n", ",\n") + "\n")
        print(f"{name}: {len(cases)} conversations, {len(texts)} texts")


if __name__ == "__main__":
    main()
