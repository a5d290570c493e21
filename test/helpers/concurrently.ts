/**
 * Runs `work(0)` … `work(count - 1)` with at most `limit` calls in flight and
 * returns the results in index order. For test set-up that stores many emails:
 * one at a time, Postgres + S3 round-trips add up to seconds.
 */
export async function concurrently<T>(count: number, limit: number, work: (index: number) => Promise<T>): Promise<T[]> {
    const results = new Array<T>(count);
    let next = 0;
    const worker = async () => {
        while (next < count) {
            const index = next++;
            results[index] = await work(index);
        }
    };

    await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
    return results;
}
