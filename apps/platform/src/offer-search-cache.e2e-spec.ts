import { createHash } from 'node:crypto';
import { ManualClock } from '@rigmarket/event-sourcing';
import { IdentityModule, RecordingMailer } from '@rigmarket/identity-2fa';
import { InstanceLifecycleModule } from '@rigmarket/instance-lifecycle';
import { MarketplaceModule, SearchOffersHandler } from '@rigmarket/marketplace-api';
import {
  BOTH_MODES,
  type PlatformHarness,
  VASTAI_SEARCH_OFFERS_DEFAULTS,
  eventually,
  startPlatform,
} from '@rigmarket/testing';
import request from 'supertest';
import { LIST_MACHINE_ASK as ASK, HOST_HARDWARE as HARDWARE } from './testing/fixtures';
import { adminInMarketplace, grantCredit, verifiedUser } from './testing/users';

/**
 * The offer search answer cache (apps/marketplace-api/src/offers/offer-search-cache.ts) as a renter meets it:
 * the next search after a change shows the change. The platform's clock is a ManualClock that moves only by
 * hand, so an entry never ages out while a test waits: only the read model's change signal (or an offer's
 * end) can make the search answer anew, and a cache that missed a change would keep the old answer.
 */
const ADMIN_KEY = 'admin-search-cache-key-0123456789';

interface Offer {
  id: number;
  machine_id: number;
  num_gpus: number;
  dph_base: number;
  duration: number;
  rentable: boolean;
}

describe.each(BOTH_MODES)('offer search answer cache over HTTP, %s', (_label, mode) => {
  let h: PlatformHarness;
  const mailer = new RecordingMailer();
  const clock = new ManualClock(new Date());
  const http = () => request(h.app.getHttpServer());
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  let renterKey: string;
  let machineId: number;
  /** The listing's end: an hour after the start of the (hand-moved) clock. */
  const endDate = Math.floor(clock.now().getTime() / 1000) + 3600;

  /** The CLI's search for this machine's offers (rentable, verified, not external). */
  const search = async (extra: Record<string, unknown> = {}): Promise<Offer[]> =>
    (
      await http()
        .post('/api/v0/bundles/')
        .set(as(renterKey))
        .send({ ...VASTAI_SEARCH_OFFERS_DEFAULTS, machine_id: { eq: machineId }, ...extra })
        .expect(200)
    ).body.offers;
  const searchText = async (): Promise<string> => {
    const res = await http()
      .post('/api/v0/bundles/')
      .set(as(renterKey))
      .send({ ...VASTAI_SEARCH_OFFERS_DEFAULTS, machine_id: { eq: machineId } })
      .expect(200);
    // The ETag set once per answer is Express's own (weak: the length and SHA-1 of the body).
    const hash = createHash('sha1').update(res.text, 'utf8').digest('base64').substring(0, 27);
    expect(res.headers.etag).toBe(`W/"${Buffer.byteLength(res.text).toString(16)}-${hash}"`);
    return res.text;
  };
  const cache = () => h.app.get(SearchOffersHandler).answers;
  /** Searches twice, the second answered from memory (so the tests below start from a cached answer). */
  async function cached(): Promise<Offer[]> {
    const first = await search();
    const hits = cache().hits;
    expect(await search()).toEqual(first);
    expect(cache().hits).toBe(hits + 1);
    return first;
  }
  const list = (price: number) =>
    http()
      .put('/api/v0/machines/create_asks/')
      .set(as(ADMIN_KEY))
      .send({ machine: machineId, ...ASK, price_gpu: price, end_date: endDate })
      .expect(200);

  beforeAll(async () => {
    h = await startPlatform(
      mode,
      [
        IdentityModule.forRoot({ adminKey: ADMIN_KEY, mailer }),
        MarketplaceModule.forRoot({ billingIntervalMs: 0 }),
        InstanceLifecycleModule.forRoot({ simulatedHost: { pullMs: 30, bootMs: 120, stopMs: 50 } }),
      ],
      { clock },
    );
    await adminInMarketplace(h.app.getHttpServer(), ADMIN_KEY);
    renterKey = await verifiedUser(h.app.getHttpServer(), mailer, 'renter', [
      '/api/v0/instances/',
      '/api/v0/template/',
    ]);
    await grantCredit(h.app.getHttpServer(), ADMIN_KEY, renterKey);
    machineId = (await http().post('/api/v0/machines/').set(as(ADMIN_KEY)).send(HARDWARE).expect(201)).body
      .machine_id;
    await list(0.5);
    await http()
      .put(`/api/v0/machines/${machineId}/verification/`)
      .set(as(ADMIN_KEY))
      .send({ verification: 'verified' })
      .expect(200);
    // The first search starts the watch; on PostgreSQL nothing is cached until its LISTEN connection is up.
    await search();
    await h.db.readModelSignalsReady();
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  it('shows an unlisted offer gone, a relisted one back and a new price, in the next search', async () => {
    expect((await cached()).map((o) => o.num_gpus)).toEqual(expect.arrayContaining([1, 2, 4]));
    await http().delete(`/api/v0/machines/${machineId}/asks/`).set(as(ADMIN_KEY)).expect(200);
    expect(await search()).toEqual([]);
    await list(0.5);
    expect((await search()).length).toBeGreaterThan(0);
    expect((await cached()).every((o) => o.dph_base === 0.5 * o.num_gpus)).toBe(true);
    await list(0.7);
    const repriced = await search();
    expect(repriced.length).toBeGreaterThan(0);
    expect(repriced.every((o) => Math.abs(o.dph_base - 0.7 * o.num_gpus) < 1e-9)).toBe(true);
  });

  it('drops the GPUs a renter took from the search once the marketplace has heard of the rent', async () => {
    const before = await cached();
    const whole = before.find((o) => o.num_gpus === 4)!;
    const rent = await eventually(
      async () => {
        const res = await http()
          .put(`/api/v0/asks/${whole.id}/`)
          .set(as(renterKey))
          .send({ image: 'busybox' });
        return res.status === 404 ? undefined : res;
      },
      60_000,
      'the listed machine in instance-lifecycle',
    );
    expect(rent.status).toBe(200);
    // Over Kafka the marketplace learns of the rent after its answer (as without the cache): the clock
    // stands still, so only the projection's commit can make the cached answer go.
    await eventually(
      async () => ((await search()).length === 0 ? true : undefined),
      60_000,
      'the rented machine gone from search',
    );
    await http()
      .delete(`/api/v0/instances/${rent.body.new_contract}/`)
      .set(as(renterKey))
      .send({})
      .expect(200);
    await eventually(
      async () => ((await search()).some((o) => o.id === whole.id) ? true : undefined),
      60_000,
      'the offer back in search',
    );
  });

  it('answers the same text for at most a second, then a fresh one (duration counts down)', async () => {
    const first = await searchText();
    clock.advance(999);
    expect(await searchText()).toBe(first);
    clock.advance(1);
    const later = JSON.parse(await searchText()).offers as Offer[];
    const earlier = JSON.parse(first).offers as Offer[];
    expect(later.map((o) => o.id)).toEqual(earlier.map((o) => o.id));
    expect(later[0]!.duration).toBeCloseTo(earlier[0]!.duration - 1, 6);
  });

  it("drops an offer from the next search once its listing's end has passed", async () => {
    clock.set(new Date(endDate * 1000 - 400));
    expect((await cached()).length).toBeGreaterThan(0);
    clock.set(new Date(endDate * 1000 + 1));
    // Within a second of the cached answer, but past the end of the offers it holds.
    expect(await search()).toEqual([]);
    const shown = await search({ rentable: { eq: 'any' } });
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((o) => !o.rentable)).toBe(true);
  });
});
