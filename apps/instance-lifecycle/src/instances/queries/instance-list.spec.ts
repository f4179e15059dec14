import { encodeToken, keysetAfter, parseListQuery } from './instance-list';

describe('the v1 instance list: keyset pages', () => {
  it('continues after the last row: NULLS LAST ascending, NULLS FIRST descending, id last', () => {
    const q = parseListQuery({ order_by: JSON.stringify([{ col: 'label', dir: 'desc' }]) }, 7);
    expect(q.orderBy).toBe('label DESC, instance_id ASC');
    const params: unknown[] = [7];
    expect(keysetAfter(q.keys, ['b', 12], params)).toBe(
      '(label < $2 OR label = $2 AND (instance_id > $3 OR instance_id IS NULL))',
    );
    expect(params).toEqual([7, 'b', 12]);
    // After a null label (first, descending): every labelled row, and the null ones with a greater id.
    expect(keysetAfter(q.keys, [null, 12], [7])).toBe(
      '(label IS NOT NULL OR label IS NULL AND (instance_id > $2 OR instance_id IS NULL))',
    );
    const asc = parseListQuery({ order_by: JSON.stringify([{ col: 'label', dir: 'asc' }]) }, 7);
    // After a null label (last, ascending): only the null ones with a greater id.
    expect(keysetAfter(asc.keys, [null, 12], [7])).toBe(
      '(label IS NULL AND (instance_id > $2 OR instance_id IS NULL))',
    );
  });

  it("reads its own token back and refuses one whose values do not fit the order's columns", () => {
    const q = parseListQuery({ order_by: JSON.stringify([{ col: 'dph_total', dir: 'asc' }]) }, 7);
    const token = encodeToken(q.keys, { dph_total: 0.25, instance_id: 40 });
    expect(
      parseListQuery({ order_by: JSON.stringify([{ col: 'dph_total' }]), after_token: token }, 7),
    ).toMatchObject({
      after: [0.25, 40],
      offset: 0,
    });
    const forged = Buffer.from(JSON.stringify({ k: ['cheap', 40] })).toString('base64url');
    expect(() =>
      parseListQuery({ order_by: JSON.stringify([{ col: 'dph_total' }]), after_token: forged }, 7),
    ).toThrow('after_token is not a token this server issued');
    // Another order (here the default, id alone) does not fit the token's keys.
    expect(() => parseListQuery({ after_token: token }, 7)).toThrow('after_token');
    expect(() => parseListQuery({ after_token: 'not base64 json' }, 7)).toThrow('after_token');
    // A token of the older offset kind still reads.
    const old = Buffer.from(JSON.stringify({ o: 25 })).toString('base64url');
    expect(parseListQuery({ after_token: old }, 7)).toMatchObject({ after: null, offset: 25 });
  });
});
