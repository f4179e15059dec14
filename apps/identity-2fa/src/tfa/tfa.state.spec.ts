import type { TfaEvent } from './tfa.events';
import { evolve, initialState } from './tfa.state';
import { T0, at, h, smsChallenge, userId } from './testing/fixtures';

const fold = (events: TfaEvent[]) => events.reduce(evolve, initialState());
const day = 24 * 3600_000;

describe('2FA state (evolve)', () => {
  it('a long-lived account keeps only the last day of challenges and SMS sends in its folded state', () => {
    const state = fold([
      smsChallenge('1', T0),
      smsChallenge('2', at(day / 2)),
      smsChallenge('3', at(day + 11 * 60_000)),
    ]);
    expect(state.challenges.map((c) => c.secretHash)).toEqual([h('2'), h('3')]);
    expect(state.smsLog.map((e) => e.at)).toEqual([at(day / 2), at(day + 11 * 60_000)]);
  });

  it('a resent code replaces the challenge secret and counts as one more SMS sent', () => {
    const state = fold([
      smsChallenge('1', T0),
      {
        type: 'TfaChallengeCodeReplaced',
        data: {
          userId,
          oldSecretHash: h('1'),
          secretHash: h('2'),
          codeHash: h('d'),
          issuedAt: at(60_000),
          expiresAt: at(11 * 60_000),
        },
      },
    ]);
    expect(state.challenges).toEqual([
      expect.objectContaining({
        secretHash: h('2'),
        codeHash: h('d'),
        expiresAt: at(11 * 60_000),
        active: true,
      }),
    ]);
    expect(state.smsLog).toHaveLength(2);
  });
});
