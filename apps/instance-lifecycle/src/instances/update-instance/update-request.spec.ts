import { ApiError } from '@rigmarket/contracts';
import { UPDATE_LIMITS, parseUpdateRequest } from './update-request';

const refusal = (body: Record<string, unknown>): string => {
  try {
    parseUpdateRequest(body);
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('the body of vastai update instance', () => {
  it('becomes the changes it gives: image, env (strings), onstart, args, and the template it names', () => {
    expect(
      parseUpdateRequest({
        id: 5,
        image: 'busybox:1.36',
        env: { GREETING: 'bonjour', N: 3, ON: true, '-p 8080:8080': '1' },
        onstart: 'echo hi',
        args: '--port 80',
        template_hash_id: 'abc123',
      }),
    ).toEqual({
      changes: {
        image: 'busybox:1.36',
        env: { GREETING: 'bonjour', N: '3', ON: 'true', '-p 8080:8080': '1' },
        onstart: 'echo hi',
        argsStr: '--port 80',
      },
      templateHashId: 'abc123',
      templateId: null,
    });
    expect(parseUpdateRequest({ id: 5, template_id: 12 })).toEqual({
      changes: {},
      templateHashId: null,
      templateId: 12,
    });
    expect(parseUpdateRequest({ id: 5, image: null })).toEqual({
      changes: {},
      templateHashId: null,
      templateId: null,
    });
  });

  it('refuses wrong types and unbounded values with a message', () => {
    expect(refusal({ image: 'a b' })).toMatch(/without spaces/);
    expect(refusal({ image: 'x'.repeat(UPDATE_LIMITS.imageChars + 1) })).toMatch(/longer than 512/);
    expect(refusal({ image: 5 })).toBe('image must be a string');
    expect(refusal({ env: '-e A=1' })).toMatch(/env must be an object/);
    expect(refusal({ env: [1] })).toMatch(/env must be an object/);
    expect(refusal({ env: { A: { b: 1 } } })).toMatch(/env A must be a string, number or boolean/);
    expect(refusal({ env: { A: 'x'.repeat(UPDATE_LIMITS.envValueChars + 1) } })).toMatch(/env A is longer/);
    const many = Object.fromEntries(
      Array.from({ length: UPDATE_LIMITS.envKeys + 1 }, (_, i) => [`K${i}`, 'v']),
    );
    expect(refusal({ env: many })).toMatch(/more than 128 variables/);
    expect(refusal({ onstart: 'x'.repeat(UPDATE_LIMITS.onstartChars + 1) })).toMatch(/onstart is longer/);
    expect(refusal({ template_id: 'abc' })).toMatch(/template_id must be a positive integer/);
    expect(refusal({ template_id: 0 })).toMatch(/template_id must be a positive integer/);
  });
});
