import { randomFillSync } from 'node:crypto';

/**
 * Bytes drawn from the system's CSPRNG at a time. One draw costs a few microseconds
 * whatever its size (bench/README.md, "The small-mail fast path: cost per stage"), and
 * every stored copy needs 12 bytes for its blob prefix: one draw serves 128 copies.
 */
const POOL_BYTES = 1536;

let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `size` (at most POOL_BYTES) cryptographically random bytes, each handed out once. A
 * new pool is allocated when one runs out, never refilled in place, so bytes handed out
 * earlier never change under their holder.
 */
export function randomBytesFromPool(size: number): Buffer {
    if (!Number.isSafeInteger(size) || size < 1 || size > POOL_BYTES) {
        throw new RangeError(`randomBytesFromPool: size must be 1..${POOL_BYTES}`);
    }

    if (offset + size > pool.length) {
        pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
        offset = 0;
    }

    const bytes = pool.subarray(offset, offset + size);
    offset += size;
    return bytes;
}
