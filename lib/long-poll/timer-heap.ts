/** Something a TimerHeap wakes at `dueAt`. */
export interface Timed {
    dueAt: number;
    /** Position in its heap, -1 when not in it. */
    heapIndex: number;
}

/**
 * A min-heap of items by due time, served by one timer: ten thousand waiters cost one
 * Node timer, not two each. The items carry their own position, so removing any of
 * them is O(log n) with no search.
 */
export class TimerHeap<T extends Timed> {
    private readonly items: T[] = [];
    private timer: NodeJS.Timeout | undefined = undefined;
    private armedAt = Infinity;

    /** `onDue` is called once per item, in order of due time, no earlier than its `dueAt` (Unix ms). */
    constructor(private readonly onDue: (item: T, now: number) => void) {}

    /** Items waiting for their time. */
    get size(): number {
        return this.items.length;
    }

    /** (Re)places `item` at `dueAt`, Unix ms. */
    schedule(item: T, dueAt: number): void {
        this.remove(item);
        item.dueAt = dueAt;
        item.heapIndex = this.items.length;
        this.items.push(item);
        this.siftUp(item.heapIndex);
        if (this.items[0] === item) {
            this.arm();
        }
    }

    /** Takes `item` out (nothing if it is not in); the timer stops once the heap is empty. */
    remove(item: T): void {
        const index = item.heapIndex;
        if (index < 0) {
            return;
        }

        const items = this.items;
        const last = items.pop()!;
        item.heapIndex = -1;
        if (last !== item) {
            items[index] = last;
            last.heapIndex = index;
            this.siftUp(index);
            this.siftDown(last.heapIndex);
        }

        if (items.length === 0) {
            this.arm();
        }
    }

    private readonly fire = (): void => {
        this.timer = undefined;
        this.armedAt = Infinity;
        const now = Date.now();
        while (this.items.length > 0 && this.items[0].dueAt <= now) {
            const item = this.items[0];
            this.remove(item);
            this.onDue(item, now);
        }

        this.arm();
    };

    private arm(): void {
        const top = this.items[0];
        if (!top) {
            if (this.timer) {
                clearTimeout(this.timer);
                this.timer = undefined;
                this.armedAt = Infinity;
            }

            return;
        }

        if (this.timer && this.armedAt <= top.dueAt) {
            // Fires in time; fire() arms the next one.
            return;
        }

        if (this.timer) {
            clearTimeout(this.timer);
        }

        this.armedAt = top.dueAt;
        this.timer = setTimeout(this.fire, Math.max(0, top.dueAt - Date.now()));
    }

    private siftUp(index: number): void {
        const items = this.items;
        const item = items[index];
        while (index > 0) {
            const parent = (index - 1) >> 1;
            if (items[parent].dueAt <= item.dueAt) {
                break;
            }

            items[index] = items[parent];
            items[index].heapIndex = index;
            index = parent;
        }

        items[index] = item;
        item.heapIndex = index;
    }

    private siftDown(index: number): void {
        const items = this.items;
        const item = items[index];
        const length = items.length;
        for (;;) {
            const left = 2 * index + 1;
            if (left >= length) {
                break;
            }

            const right = left + 1;
            const child = right < length && items[right].dueAt < items[left].dueAt ? right : left;
            if (items[child].dueAt >= item.dueAt) {
                break;
            }

            items[index] = items[child];
            items[index].heapIndex = index;
            index = child;
        }

        items[index] = item;
        item.heapIndex = index;
    }
}
