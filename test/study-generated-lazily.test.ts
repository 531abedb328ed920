import { afterEach, describe, expect, it, vi } from 'vitest';
import { conversationHash } from '../src/gate/baseline.js';
import type { StudyRecords } from '../src/output/record-encoder.js';
import type { StudySink } from '../src/output/sink.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { support } from '../src/scenario/generate/support.js';
import { studyConversation } from '../src/study/explain.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { MAX_GENERATE_COUNT } from '../src/study/sources.js';
import { defaultStudy, studyConversations, type GenerateSource } from '../src/study/study.js';
import { ROOT } from './_shared.js';

/**
 * A study's generated set is made a conversation at a time, as the run asks
 * for it: none is made when the study is loaded, each is made anew when
 * asked for (none is held), and the run's sink gets a scenario's records
 * before the next conversation is made.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

const SET: GenerateSource = { kind: 'generate', profile: 'support', count: 4, seed: 5, params: { turns: [3, 5] }, weight: 2 };

/** The same set made whole, at once, as `generate` makes it. */
const whole = () => generateConversations({ profile: 'support', count: 4, seed: 5, params: { turns: [3, 5] } }).map((c) => ({ ...c, weight: 2 }));

describe('a study’s generated conversations', () => {
  it('are numbered when loaded, none made, and made one at a time when asked for', () => {
    const build = vi.spyOn(support, 'build');
    const all = studyConversations([{ ...SET, count: MAX_GENERATE_COUNT }]);
    expect(all.length).toBe(MAX_GENERATE_COUNT);
    expect(build).not.toHaveBeenCalled();
    expect(all.id(MAX_GENERATE_COUNT - 1)).toBe('support-100000');
    expect(build).not.toHaveBeenCalled();
    expect(all.at(MAX_GENERATE_COUNT - 1).id).toBe('support-100000');
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('are made only the one asked for when explain names one', () => {
    const build = vi.spyOn(support, 'build');
    const c = studyConversation({ ...defaultStudy(), scenarios: [{ ...SET, count: MAX_GENERATE_COUNT }] }, 'support-050000');
    expect(c.id).toBe('support-050000');
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('are those of the set made whole, each made anew when asked again (none held)', () => {
    const all = studyConversations([SET]);
    const made = [0, 1, 2, 3].map((i) => all.at(i));
    expect(made).toEqual(whole());
    expect(all.at(1)).not.toBe(made[1]);
    expect(all.at(1)).toEqual(made[1]);
    // Only a conversation read from a file is held, until it is let go.
    expect(all.read()).toEqual([]);
  });

  it('are held when read from a file, until let go', () => {
    const all = studyConversations([{ kind: 'glob', pattern: 'scenarios/noah-amnesia.yaml', base: ROOT }, SET]);
    expect(all.length).toBe(5);
    expect(all.at(0)).toBe(all.at(0));
    expect(all.read().map((c) => c.id)).toEqual(['noah-amnesia']);
    all.release(0);
    expect(all.read()).toEqual([]);
    expect([all.id(0), all.id(1)]).toEqual([undefined, 'support-0001']);
    expect(() => all.at(0)).toThrow(RangeError);
  });
});

describe('a study run', () => {
  it('makes each generated conversation when the run takes it: the sink has its records before the next is made', async () => {
    const build = vi.spyOn(support, 'build');
    /** How many conversations had been made when the sink got each scenario's records. */
    const madeAtAdd: number[] = [];
    const ids: string[] = [];
    const sink: StudySink<void> = {
      add(records: StudyRecords) {
        madeAtAdd.push(build.mock.calls.length);
        ids.push(records.summary[0]!.scenario);
      },
      finish: async () => undefined,
      abort() {},
    };
    const study = { ...defaultStudy(), scenarios: [SET], policies: defaultStudy().policies.slice(0, 2), jobs: 1, cacheFolder: undefined };
    const { fingerprint, info } = await runStudyPipeline(study, sink);
    expect(madeAtAdd).toEqual([1, 2, 3, 4]);
    expect(ids).toEqual(['support-0001', 'support-0002', 'support-0003', 'support-0004']);
    // What the fingerprint and the report info say of each was taken as the run took it: that of the set made whole.
    expect(fingerprint.scenarios).toEqual(Object.fromEntries(whole().map((c) => [c.id, conversationHash(c)])));
    expect(info.scenarios.map((c) => [c.id, c.source, c.turns, c.weight])).toEqual(whole().map((c) => [c.id, c.source, c.turns.length, 2]));
  });
});
