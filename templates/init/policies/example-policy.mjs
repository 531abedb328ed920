// A memory policy of your own: what the chatbot backend sends to the model
// on every call. This one, `keep-edges`, sends the system prompt, the first
// `keep` exchanges of the conversation (where users tend to say who they
// are), the last `keep` exchanges, and the current turn.
//
// It imports nothing, so `npx ctxsim run study.yaml` runs it as it is: the
// pieces ctxsim's own policies are made of come in `deps.blocks`. The rules
// every policy keeps, how each call below is made, and every block are in
// ctxsim's docs/custom-policies.md; to check this file against the rules,
// run `npx ctxsim check-policy ./policies/example-policy.mjs` (the workflow
// does), or call `checkPolicyContract(policy, conversations)` in a test.
//
// The type comment below is for an editor with ctxsim installed (it imports
// nothing at run time): `params` is this policy's own parameter, `keep`, with
// its default filled in, and the common ones (`sessionCap`, `forget`,
// `moderation`), so `// @ts-check` or `checkJs` checks the file as it is.

/** @type {import('ctxsim').Policy<{ keep: number } & import('ctxsim').CommonParams>} */
export default {
  id: 'keep-edges',
  describe: 'the first and the last `keep` exchanges, plus the current turn',
  // One parameter, in the table shape: its default, kind and bounds. ctxsim
  // checks the values a study or `--policy` gives (`keep=-1` is an error)
  // and fills in the default. Every policy also takes `sessionCap`, `forget`
  // and `moderation`: the transcript below honours them.
  params: {
    keep: { default: 2, kind: 'int', min: 0 },
  },

  /** Called once per conversation; the session holds that conversation's memory and nothing else. */
  start(conversation, params, { blocks }) {
    const head = blocks.pinned(conversation); // the system prompt, if there is one
    // The raw history, whole exchanges (user message, tool call and results,
    // reply). Its `commit` skips a turn `moderation: drop` keeps out and
    // starts over after `sessionCap` exchanges; its `forget` redacts.
    const history = blocks.transcript(params);
    const keep = params.keep;
    /** The exchanges this policy still sends: the first `keep` and the last `keep` (never the same one twice). */
    const edges = () => {
      const all = history.exchanges;
      return { first: all.slice(0, keep), last: all.slice(Math.max(keep, all.length - keep)) };
    };

    return {
      // A model call: `pending` is the current turn so far (the user message,
      // then the tool call and its results), always sent last and in full.
      prompt(pending) {
        const { first, last } = edges();
        return {
          messages: [...head, ...first.flat(), ...last.flat(), ...pending],
          overBudget: false, // this policy has no budget
          upkeep: [], // no summarization or embedding before the call
          // The system prompt and the first exchanges do not change from call
          // to call: the provider's prompt cache can serve them.
          stablePrefix: head.length + first.flat().length,
        };
      },

      // After the reply: store the finished exchange (no upkeep after the turn).
      commit: history.commit,

      // The user asked to forget facts: every value they had is redacted from
      // the stored messages. This policy stores only raw messages, so
      // `cascade` and `naive` erase the same.
      forget: history.forget,

      // What the session stores, as a backend would keep it: the messages it
      // may still send (an exchange between the edges never comes back).
      artifacts() {
        const { first, last } = edges();
        return [blocks.transcriptArtifact([...first.flat(), ...last.flat()])];
      },
    };
  },
};
