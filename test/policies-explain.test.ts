import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { explain } from '../src/cli/explain.js';

const voice = fileURLToPath(new URL('../scenarios/voice-assistant-tasks.yaml', import.meta.url));

async function explainText(policy: string, turn: number, tokenizer = 'auto', file = voice): Promise<string> {
  let out = '';
  await explain({ file, policy, turn, model: 'gpt-4o-mini', tokenizer, seed: 42 }, { out: (t) => (out += t), err: () => {}, isTTY: false });
  return out;
}

describe('explain shows what the policy made', () => {
  it('retrieved memories with their scores', async () => {
    const out = await explainText('retrieval', 13);
    expect(out).toContain('system[retrieved 0.28]');
    expect(out).toContain(
      '#2 retrieved (policy-made, score 0.2801, 23 tokens): Earlier (turn 1, user): Remind me to call the plumber tomorrow at nine.',
    );
    expect(out).toContain('upkeep before this call: embed on text-embedding-3-small, 12 in, 0 out');
  });

  // The summary and the sheet are counted with chars4 (tokens = floor(characters / 4), no chat overhead), so their counts can be checked by hand.
  it('the summary text in full, and the summarization the user waited for (chars4)', async () => {
    const out = await explainText('summary-buffer', 13, 'chars4');
    // The fold before turn 13 (turns 5-8 into the summary of turns 1-4) writes: the header (47 chars → 11); the "Known:" list,
    // every span of turns 1-8 in the order first read, the task id T-481 and the plumber's number among them (" Known: …" 213 → 53: 64);
    // the topic sentences newest first while they fit (turn 8: 26, turn 7: 23, turn 6: 18, turn 5: 33, turn 4: 22 → 186; turn 3's,
    // 30+, does not); one padding sentence (10 → 196; the next, 8, would make 204). 47 + 213 + 89 + 134 + 74 + 93 + 107 + 43 = 800 chars → 200.
    const summary =
      'Summary of the conversation so far (turns 1-8). ' +
      'Known: tomorrow; nine; Call; 09:00; T-481; 2025-03-12T09:00; 9 am; Arjun; 98450 12345; Plumber Arjun; M-77; morning; Sunny; 24; ' +
      'today; 18:00; T-482; 2025-03-11T18:00; this evening; ten minutes; Timer; 40 minutes. ' +
      'In turn 4 the user asked about weather, and the assistant answered about around degrees. ' +
      'In turn 5 the user asked about add task buy bread way home, create_task was called, and the assistant answered about added buy bread. ' +
      'In turn 6 the user asked about set, and the assistant answered about set. ' +
      'In turn 7 the user asked about play jazz, and the assistant answered about playing jazz mix. ' +
      'In turn 8 the user asked about long drive airport right, and the assistant answered about current traffic. ' +
      'The conversation stayed polite throughout.';
    expect(summary.length).toBe(800);
    expect(out).toContain(`#2 summary (policy-made, 200 tokens): ${summary}\n`);
    // In: the template (188 chars → 47) + the old summary (199, as turn 9's call lists it) + turns 5-8 as listed there
    // (10 + 13 + 16 + 8, 7 + 6, 3 + 4, 11 + 9 = 87) = 333; out: the 200 above.
    expect((await explainText('summary-buffer', 9, 'chars4')).match(/ 2 {2}system\[summary\] +- +(\d+) /)?.[1]).toBe('199');
    expect(out).toContain('upkeep before this call: summary on gpt-4o-mini, 333 in, 200 out');
    expect(await explainText('summary-buffer', 12, 'chars4')).not.toContain('upkeep before this call');
    // With the default tokenizer (o200k_base) the same fold costs what docs/upkeep.md states (388 in, 195 out), and the
    // summary is sent as 199 tokens: its 195 of text and a system message's overhead (3 per message + 1 for "system").
    const o200k = await explainText('summary-buffer', 13);
    expect(o200k).toContain('upkeep before this call: summary on gpt-4o-mini, 388 in, 195 out');
    expect(o200k).toContain('#2 summary (policy-made, 199 tokens): Summary of the conversation so far (turns 1-8). Known: tomorrow; nine; Call; 09:00; T-481;');
  });

  it('the fact sheet (chars4)', async () => {
    // Every span the extractions of turns 1-12 found (recall 1), in the order first found, each "kind: value"; turn 12 finds none.
    // 410 characters → 102 tokens, well within the sheet's 500: nothing dropped.
    const sheet =
      'Known facts: date: tomorrow; number: nine; name: Call; time: 09:00; id: T-481; date: 2025-03-12T09:00; time: 9 am; name: Arjun; ' +
      'phone: 98450 12345; name: Plumber Arjun; id: M-77; time: morning; name: Sunny; number: 24; date: today; time: 18:00; id: T-482; ' +
      'date: 2025-03-11T18:00; time: this evening; time: ten minutes; name: Timer; time: 40 minutes; name: Memo; date: Friday; id: M-78; ' +
      'time: 4 pm; name: Volume';
    expect(sheet.length).toBe(410);
    expect(await explainText('facts', 13, 'chars4')).toContain(`#2 facts (policy-made, 102 tokens): ${sheet}\n`);
  });

  // gpt-4o-mini: $0.15/M input, $0.60/M output (nothing cached below 1,024 tokens); text-embedding-3-small: $0.02/M.
  it('each call’s cost, the upkeep’s, the turn’s, and the probe’s outcome', async () => {
    const out = await explainText('retrieval', 13);
    // 259 × 0.15 + 19 × 0.60 = 50.25 µ$; 311 × 0.15 + 10 × 0.60 = 52.65 µ$; embeddings of 12 and 54 tokens: 0.24 and 1.08 µ$.
    expect(out).toContain('  total                            259  12 messages\n  cost on gpt-4o-mini: 259 uncached, 0 cache reads, 0 cache writes, 19 output tokens: $0.00005025\n');
    expect(out).toContain('  cost on gpt-4o-mini: 311 uncached, 0 cache reads, 0 cache writes, 10 output tokens: $0.00005265\n');
    expect(out).toContain('  upkeep before this call: embed on text-embedding-3-small, 12 in, 0 out: $0.00000024\n');
    expect(out).toContain('\n  upkeep after the calls: embed on text-embedding-3-small, 54 in, 0 out: $0.00000108\n');
    expect(out).toContain('\nturn 13 cost: $0.00010422 (calls $0.00010290, upkeep $0.00000132)\nprobe task_id: retained (value "T-481" in call 1\'s prompt, from the retrieved memories)\n');
    // The summary the user waited for: 388 × 0.15 + 195 × 0.60 = 175.2 µ$.
    expect(await explainText('summary-buffer', 13)).toContain('upkeep before this call: summary on gpt-4o-mini, 388 in, 195 out: $0.00017520\n');
    // The correction at turn 5 is outside a ten-turn window at turn 27; the old address, in turn 19's tool result, is not.
    const email = fileURLToPath(new URL('../scenarios/support-email-correction.yaml', import.meta.url));
    expect(await explainText('window-turns:turns=10', 27, 'auto', email)).toContain('\nprobe email: stale (only an older value, "t.nowak@oldmail.example", in call 1\'s prompt, from the window)\n');
    expect(await explainText('full', 27, 'auto', email)).toContain('\nprobe email: retained (value "nowak.trails@brightpost.example" in call 1\'s prompt, from the window)\n');
  });
});
