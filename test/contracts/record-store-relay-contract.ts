import * as Code from '@hapi/code';
import type { ContractScript, OpenedRecordStore } from './record-store-contract';

const { expect } = Code;

/** What auto-relay sent (docs/api.md, "Auto-relay"): claimRelayKeys() takes each key once, for one delivery, for every record store. */
export function recordStoreRelayContract(lab: ContractScript, kind: string, open: () => Promise<OpenedRecordStore>): void {
    const { describe, it, before, after } = lab;

    describe(`RecordStore relay keys (${kind})`, () => {
        let opened: OpenedRecordStore | undefined;
        const claim = (keys: string[], delivery: string, now = 1_000_000, forgetBefore = 0) => opened!.store.claimRelayKeys!(keys, delivery, now, forgetBefore);
        const key = (name: string) => `${kind}-${name}-${Math.random().toString(36).slice(2)}`.padEnd(64, '0').slice(0, 64);

        before(async () => {
            opened = await open();
        });

        after(() => opened?.cleanup());

        it('gives a key to the first delivery that asks, again to that delivery, never to another', async () => {
            const [a, b] = [key('a'), key('b')];
            expect(await claim([a, b], 'delivery-1')).to.be.true();
            expect(await claim([a, b], 'delivery-1')).to.be.true();
            expect(await claim([a, b], 'delivery-2')).to.be.false();
            // One key taken by another delivery is enough to refuse: a copy known by its bytes or its Message-ID.
            expect(await claim([key('c'), b], 'delivery-3')).to.be.false();
        });

        it('gives a key to exactly one of many deliveries asking at once', async () => {
            const shared = key('shared');
            const won = await Promise.all(Array.from({ length: 20 }, (_, i) => claim([shared], `racer-${i}`)));
            expect(won.filter(Boolean).length).to.equal(1);
        });

        it('forgets keys taken before forgetBefore', async () => {
            const old = key('old');
            expect(await claim([old], 'early', 1_000)).to.be.true();
            expect(await claim([old], 'late', 5_000, 2_000)).to.be.true();
            expect(await claim([old], 'early', 6_000, 2_000)).to.be.false();
        });
    });
}
