import { describe, expect, it } from 'vitest';
import {
  QUERY_PAGE_BASE_RU,
  chargeAnswered,
  chargeBatchResults,
  readCharge,
  replaceCharge,
  requestCharge,
  writeCharge,
} from './request-charge.js';

const KB = 1024;

describe('requestCharge', () => {
  it('charges the published figures for point reads and inserts', () => {
    expect(requestCharge({ operation: 'item.read', statusCode: 200, bytes: KB })).toBe(1);
    expect(requestCharge({ operation: 'item.read', statusCode: 200, bytes: 128 * KB })).toBe(9.95);
    expect(requestCharge({ operation: 'item.create', statusCode: 201, bytes: KB })).toBe(4.95);
    expect(requestCharge({ operation: 'item.create', statusCode: 201, bytes: 64 * KB })).toBe(22.67);
  });

  it('charges a small item as a 1 KB one and interpolates between the published sizes', () => {
    expect(readCharge(200)).toBe(1);
    expect(writeCharge(3 * KB)).toBeCloseTo((6.29 + 6.67) / 2, 6);
    expect(readCharge(100 * KB)).toBeGreaterThan(4.76);
    expect(readCharge(100 * KB)).toBeLessThan(9.95);
  });

  it('grows with the item size, for reads and writes alike', () => {
    const sizes = [1, 3, 10, 50, 300, 1500, 3000].map((kb) => kb * KB);
    for (const [a, b] of sizes.slice(1).map((size, i) => [sizes[i]!, size] as const)) {
      expect(readCharge(b)).toBeGreaterThan(readCharge(a));
      expect(writeCharge(b)).toBeGreaterThan(writeCharge(a));
    }
  });

  it('charges a replace or a patch twice the insert, and an upsert by what it did', () => {
    const insert = writeCharge(2 * KB);
    expect(replaceCharge(2 * KB)).toBeCloseTo(2 * insert, 6);
    expect(requestCharge({ operation: 'item.patch', statusCode: 200, bytes: 2 * KB })).toBe(12.58);
    expect(requestCharge({ operation: 'item.upsert', statusCode: 201, bytes: 2 * KB })).toBe(6.29);
    expect(requestCharge({ operation: 'item.upsert', statusCode: 200, bytes: 2 * KB })).toBe(12.58);
  });

  it('charges a query page its base, then what it returns', () => {
    const empty = requestCharge({ operation: 'item.query', statusCode: 200, bytes: 30, itemCount: 0 });
    const one = requestCharge({ operation: 'item.query', statusCode: 200, bytes: KB, itemCount: 1 });
    const many = requestCharge({ operation: 'item.query', statusCode: 200, bytes: 40 * KB, itemCount: 40 });
    expect(empty).toBe(QUERY_PAGE_BASE_RU);
    expect(one).toBeGreaterThan(empty);
    expect(many).toBeGreaterThan(one);
  });

  it('charges a batch the sum of its operations, failed ones at nothing', () => {
    const charge = requestCharge({
      operation: 'item.batch',
      statusCode: 200,
      bytes: 0,
      batch: [
        { operationType: 'Create', statusCode: 201, bytes: KB },
        { operationType: 'Read', statusCode: 200, bytes: KB },
        { operationType: 'Patch', statusCode: 200, bytes: KB },
        { operationType: 'Upsert', statusCode: 409, bytes: KB },
      ],
    });
    expect(charge).toBe(round2(4.95 + 1 + 2 * 4.95));
  });

  it('charges metadata reads one unit, and nothing for throttling, failures or query plans', () => {
    expect(requestCharge({ operation: 'container.read', statusCode: 200, bytes: 3 * KB })).toBe(1);
    expect(requestCharge({ operation: 'partitionKeyRange.readAll', statusCode: 200, bytes: KB })).toBe(1);
    expect(requestCharge({ operation: 'item.create', statusCode: 429, bytes: KB })).toBe(0);
    expect(requestCharge({ operation: 'item.create', statusCode: 500, bytes: KB })).toBe(0);
    expect(requestCharge({ operation: 'item.query', statusCode: 200, bytes: KB, queryPlan: true })).toBe(0);
    expect(requestCharge({ operation: 'item.read', statusCode: 404, bytes: 100 })).toBe(1);
  });
});

describe('chargeAnswered', () => {
  const answered = {
    payload: undefined,
    requestBytes: 0,
    responseBytes: 0,
    minimal: false,
    queryPlan: false,
  };

  it('sizes a write by what was sent, a read by what was answered', () => {
    expect(
      chargeAnswered({ ...answered, operation: 'item.create', statusCode: 201, requestBytes: 2 * KB }),
    ).toBe(6.29);
    expect(
      chargeAnswered({ ...answered, operation: 'item.read', statusCode: 200, responseBytes: 128 * KB }),
    ).toBe(9.95);
  });

  it('sizes a patch answered without its item by the item it wrote', () => {
    const item = { id: 'a', text: 'x'.repeat(2 * KB - 20) };
    const patched = chargeAnswered({
      ...answered,
      operation: 'item.patch',
      statusCode: 200,
      payload: item,
      requestBytes: 60,
      minimal: true,
    });
    expect(patched).toBe(round2(replaceCharge(Buffer.byteLength(JSON.stringify(item)))));
  });

  it("counts a query page's items from its answer", () => {
    const page = { Documents: [{}, {}, {}], _count: 3 };
    const three = chargeAnswered({ ...answered, operation: 'item.query', statusCode: 200, payload: page });
    const none = chargeAnswered({
      ...answered,
      operation: 'item.query',
      statusCode: 200,
      payload: { _count: 0 },
    });
    expect(three).toBeGreaterThan(none);
  });
});

describe('chargeBatchResults', () => {
  it('prices each operation from its type in the request and sets its charge on the result', () => {
    const body = [
      { operationType: 'Create', resourceBody: { id: 'a' } },
      { operationType: 'Read', id: 'a' },
    ];
    const results: Record<string, unknown>[] = [
      { statusCode: 201 },
      { statusCode: 200, resourceBody: { id: 'a' } },
    ];
    const operations = chargeBatchResults([Buffer.from(JSON.stringify(body))], results);
    expect(operations?.map((o) => o.operationType)).toEqual(['Create', 'Read']);
    expect(results.map((r) => r.requestCharge)).toEqual([4.95, 1]);
  });

  it('gives up on a body that is not a JSON array', () => {
    expect(chargeBatchResults([Buffer.from('{')], [{ statusCode: 200 }])).toBeUndefined();
    expect(chargeBatchResults([Buffer.from('{}')], [{ statusCode: 200 }])).toBeUndefined();
  });
});

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
