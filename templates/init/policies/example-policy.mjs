// A memory policy of your own: what the chatbot backend sends to the model
// on every call. This one, `keep-edges`, sends the system prompt, the first
// `keep` exchanges of the conversation (where users tend to say who they
// are), the last `keep` exchanges, and the current turn.
//
// It imports nothing, so `npx ctxsim run study.yaml` runs it as it is. The
// rules every policy keeps, and how each call below is made, are in
// ctxsim's docs/custom-policies.md; to check this file against them, call
// `checkPolicyContract(policy, conversations)` from the ctxsim package.

/** Erased text is replaced by this, as ctxsim's own policies do. */
const FORGOTTEN = '[forgotten]';

/** Lower case, whitespace collapsed: how ctxsim compares fact values with text. */
const normalize = (text) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/** A message's text as ctxsim counts and searches it: the content, then any tool calls. */
function messageText(m) {
  if (!m.toolCalls?.length) return m.content;
  const calls = m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join('\n');
  return m.content ? `${m.content}\n${calls}` : calls;
}

/** Whether a text holds one of the (normalized) values. */
const holds = (text, values) => values.some((v) => normalize(text).includes(v));

/** The text with each (normalized) value replaced: any case, any run of whitespace; the whole text if one still slips through. */
function redactText(text, values) {
  let out = text;
  for (const v of values) {
    const words = v.split(' ').map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    out = out.replace(new RegExp(words.join('\\s+'), 'gi'), FORGOTTEN);
  }
  return holds(out, values) ? FORGOTTEN : out;
}

/** A redacted copy of a message (content and tool-call arguments), or the message itself when it holds none of the values. */
function redactMessage(m, values) {
  if (!holds(messageText(m), values)) return m;
  const copy = { ...m, content: redactText(m.content, values) };
  if (m.toolCalls) copy.toolCalls = m.toolCalls.map((c) => ({ ...c, arguments: redactText(c.arguments, values) }));
  return copy;
}

/** @type {import('ctxsim').Policy} */
export default {
  id: 'keep-edges',
  describe: 'the first and the last `keep` exchanges, plus the current turn',
  // One parameter, in the table shape: its default, kind and bounds. ctxsim
  // checks the values a study or `--policy` gives (`keep=-1` is an error)
  // and fills in the default. Every policy also takes `sessionCap`, `forget`
  // and `moderation`, handled below.
  params: {
    keep: { default: 2, kind: 'int', min: 0 },
  },

  /** Called once per conversation; the session holds that conversation's memory and nothing else. */
  start(conversation, params) {
    const head = conversation.system ? [conversation.system] : [];
    // What the policy stores: whole exchanges (user message, tool call and results, reply).
    let first = [];
    let last = [];
    let sinceRestart = 0;
    const stored = () => [...first, ...last].flat();

    return {
      // A model call: `pending` is the current turn so far (the user message,
      // then the tool call and its results), always sent last and in full.
      prompt(pending) {
        return {
          messages: [...head, ...stored(), ...pending],
          overBudget: false, // this policy has no budget
          upkeep: [], // no summarization or embedding before the call
          // The system prompt and the first exchanges do not change from call
          // to call: the provider's prompt cache can serve them.
          stablePrefix: head.length + first.flat().length,
        };
      },

      // After the reply: store the finished exchange.
      commit(exchange, info) {
        // `moderation: drop`: a turn flagged as a prompt injection is answered but never stored.
        if (params.moderation === 'drop' && info.turn.injection) return [];
        if (first.length < params.keep) first.push(exchange);
        else if (params.keep > 0) last = [...last, exchange].slice(-params.keep);
        // `sessionCap: N`: after N exchanges the conversation starts over, with nothing stored.
        sinceRestart += 1;
        if (params.sessionCap !== undefined && sinceRestart >= params.sessionCap) {
          first = [];
          last = [];
          sinceRestart = 0;
        }
        return []; // no upkeep after the turn
      },

      // The user asked to forget facts: erase every value they had from what is stored.
      // This policy stores only raw messages, so `cascade` and `naive` erase the same.
      forget(facts) {
        const values = [...new Set(facts.flatMap((f) => f.values))].filter(Boolean);
        if (values.length) {
          first = first.map((e) => e.map((m) => redactMessage(m, values)));
          last = last.map((e) => e.map((m) => redactMessage(m, values)));
        }
        return [];
      },

      // What the session stores now, as a backend would keep it: here, one transcript.
      artifacts() {
        const texts = stored().map(messageText);
        return [{ kind: 'transcript', texts, bytes: texts.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0) }];
      },
    };
  },
};
