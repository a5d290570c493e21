import type { StagedBlob } from '../blob-store/blob-store';
import type { FaultRule } from '../faults/fault-rule';
import type { ApiKeyInfo, EmailDraft, EmailRecord, InboxPage, InboxQuery, KeyScope, ListQuery, RecordPage, SearchTerm, SmtpUserInfo } from '../types';
import type { OnProgress } from '../util/progress';

/** Result of storing the copies of one delivery. */
export interface SaveResult {
    /** The stored records, in the order of the drafts, with their assigned ids. */
    saved: EmailRecord[];
    /**
     * Earlier copies replaced by this delivery: their blobs are garbage once no record
     * references them (other copies of their delivery share them).
     */
    replaced: EmailRecord[];
    /**
     * Keys of `replaced`'s blobs that the save already deleted in its own transaction
     * (staged blobs kept in the records' database that no record references any more):
     * the caller checks only the rest.
     */
    removedBlobKeys?: string[];
}

/** What else a save commits. */
export interface SaveOptions {
    /**
     * Blobs staged by a blob store (BlobStore.stage()) for this delivery, written in the
     * transaction that stores its records: committed with them, or not at all. Their
     * target must be this store's `stagedBlobTarget`.
     */
    blobs?: StagedBlob[];
    /**
     * Where each stored draft is to be delivered, in the order of the drafts (docs/api.md,
     * "Webhooks" and "Auto-relay"): one pending delivery per (stored email, target) is
     * written in the same transaction.
     */
    deliveries?: DeliveryTarget[][];
}

/** What an outbox delivery does: a webhook POST, or a relay of the email over SMTP. */
export type DeliveryKind = 'webhook' | 'relay';

/** Where one delivery goes: its kind, and a target of that kind (a webhook's URL, the relay's name). */
export interface DeliveryTarget {
    kind: DeliveryKind;
    target: string;
}

/** A pending delivery, as a dispatcher claimed it. */
export interface OutboxDelivery {
    /** The delivery's id (a webhook's `webhook-id` header): the same on every attempt. */
    id: string;
    kind: DeliveryKind;
    messageId: string;
    target: string;
    /** Attempts made before this one. */
    attempts: number;
    /** When the email was stored with it, Unix ms. */
    createdAt: number;
    /** The token of this claim: only its holder records the outcome. */
    claim: string;
}

/**
 * Where email records and API keys live. Implementations report "absent" as
 * `null`/`false`, throw only when broken, and never leak driver objects.
 */
export interface RecordStore {
    /**
     * Creates or upgrades the schema and fills in what an upgrade adds to stored emails;
     * safe to call on every start. `onProgress` hears how the filling goes, emails done
     * of those there were (it can take minutes over a million).
     */
    migrate(options?: { onProgress?: OnProgress }): Promise<void>;

    /**
     * Stores the copies of one delivery atomically: all or none (the transaction may
     * be shared with concurrent deliveries, each all-or-nothing). Ids follow docs/design.md:
     * an existing copy for the same (inbox, sourceId) is replaced and keeps its id;
     * otherwise a single-inbox delivery takes `sourceId` when no other record holds
     * it, and everything else gets `deriveMessageId(sourceId, inbox)`.
     */
    saveEmails(drafts: EmailDraft[], options?: SaveOptions): Promise<SaveResult>;

    /**
     * Optional: the database this store's save transaction can also write blobs to
     * (SQLite: the resolved file name). A blob store's staged writes with this target
     * may be passed to saveEmails(); absent when the store cannot (Postgres, :memory:).
     */
    readonly stagedBlobTarget?: string;

    /** One record by id, or null. */
    getEmail(messageId: string): Promise<EmailRecord | null>;

    /** One page, newest first (receivedAt desc, messageId desc), keyset paginated. */
    listEmails(query: ListQuery): Promise<RecordPage>;

    /**
     * One page of the inboxes that hold mail, most recently received first, then by name
     * (bytewise); keyset paginated, read from a summary the store keeps exact on every
     * write and delete (never a scan of the emails).
     */
    listInboxes(query: InboxQuery): Promise<InboxPage>;

    /**
     * A number that grows whenever a record is stored in the inbox (0 when none
     * ever was). Deletes need not change it. Idle long-polls probe this instead of
     * running their own queries.
     */
    inboxVersion(inbox: string): Promise<number>;

    /**
     * Deletes one record and returns it (so its blobs can go next), or null; with
     * `inboxPrefix`, only a record of an inbox whose name starts with it (null otherwise).
     */
    deleteEmail(messageId: string, options?: { inboxPrefix?: string | null }): Promise<EmailRecord | null>;

    /**
     * Deletes up to `batchSize` records received before `receivedBefore` (Unix ms), oldest
     * first, and returns them (the retention sweep's maximum age). Found through an index;
     * with several processes at once, each record is returned to one of them.
     */
    deleteReceivedBeforeBatch(receivedBefore: number, batchSize: number): Promise<EmailRecord[]>;

    /**
     * Up to `limit` names, in name order after `after`, of the inboxes holding more than
     * `maxCount` emails, read from the inbox summary (the retention sweep's per-inbox maximum).
     */
    inboxesOver(maxCount: number, page: { after?: string; limit: number }): Promise<string[]>;

    /**
     * Deletes up to `batchSize` records of `inbox` beyond its newest `keep` (in the list's
     * order) and returns them; none once the inbox holds `keep` or fewer.
     */
    deleteBeyondNewestBatch(inbox: string, keep: number, batchSize: number): Promise<EmailRecord[]>;

    /** Deletes up to `batchSize` records of an inbox (only those matching every term of `q`, when given) and returns them. */
    deleteInboxBatch(inbox: string, batchSize: number, q?: SearchTerm[]): Promise<EmailRecord[]>;

    /**
     * Replaces an email's tags (each valid, at most MAX_TAGS: lib/identity/tags.ts; else throws
     * INVALID_INPUT) and returns the record as it now stands, or null when there is no such
     * email (with `inboxPrefix`, none of an inbox whose name starts with it: that one is left
     * as it was). Changes neither its place in the list nor inboxVersion().
     */
    setTags(messageId: string, tags: string[], options?: { inboxPrefix?: string | null }): Promise<EmailRecord | null>;

    /**
     * Marks an email read (`seen` true) or unread and returns the record as it now stands, or
     * null when there is no such email (with `inboxPrefix`, as setTags()). Changes neither its
     * place in the list nor inboxVersion().
     */
    setSeen(messageId: string, seen: boolean, options?: { inboxPrefix?: string | null }): Promise<EmailRecord | null>;

    /**
     * Of the given blob keys, those some record still references (the orphan sweep, and
     * the removal of a deleted or replaced copy's blobs, which other copies may share):
     * an index lookup per key, whatever the number of records referencing it.
     */
    referencedBlobKeys(keys: string[]): Promise<Set<string>>;

    /** Stores a new key (full access unless `scope` says otherwise); throws InboxCaptureError DUPLICATE_KEY when the name exists. */
    createKey(name: string, hashHex: string, scope?: Partial<KeyScope>): Promise<ApiKeyInfo>;

    /** The active (not revoked) key with this SHA-256 hex, or null. */
    findActiveKeyByHash(hashHex: string): Promise<ApiKeyInfo | null>;

    /** Marks a key revoked; false when no active key has that name. */
    revokeKey(name: string): Promise<boolean>;

    /** All keys, oldest first. */
    listKeys(): Promise<ApiKeyInfo[]>;

    /** Optional (stored SMTP users need it): stores a new SMTP user; null when one has that name. */
    createSmtpUser?(name: string, passwordHash: string, inboxPrefix: string): Promise<SmtpUserInfo | null>;

    /** The SMTP user of that name with its password's stored hash, or null. */
    findSmtpUser?(name: string): Promise<(SmtpUserInfo & { passwordHash: string }) | null>;

    /** Deletes the SMTP user of that name; false when there is none. */
    deleteSmtpUser?(name: string): Promise<boolean>;

    /** Every SMTP user, oldest first (never a hash). */
    listSmtpUsers?(): Promise<SmtpUserInfo[]>;

    /**
     * Optional cross-process wake-up: calls `listener(inbox)` when any process
     * stores mail (Postgres LISTEN/NOTIFY). Resolves to an unsubscribe function.
     */
    watchInboxes?(listener: (inbox: string) => void): Promise<() => Promise<void>>;

    /**
     * Optional (webhooks and the relay need it): removes the deliveries in `done` (sent,
     * skipped or given up; each only while its claim is the latest), then claims up to
     * `limit` due deliveries of `kind` to `targets`, oldest due first, each claimed by one
     * caller across processes, for `leaseMs` (then due again). One transaction for both.
     */
    claimDeliveries?(kind: DeliveryKind, targets: string[], limit: number, leaseMs: number, done?: OutboxDelivery[]): Promise<OutboxDelivery[]>;

    /** Records a failed attempt and when to try again; a no-op when the claim is no longer the latest. */
    retryDelivery?(delivery: OutboxDelivery, nextAttemptAt: number, error: string): Promise<void>;

    /** Removes deliveries of `kind` stored before `createdBefore` (Unix ms), whatever their target; answers how many. */
    dropDeliveriesBefore?(kind: DeliveryKind, createdBefore: number): Promise<number>;

    /**
     * Optional (faults need it): stores a fault rule (docs/api.md, "Faults"). `admit`, given
     * every rule kept, may throw to refuse it; it runs in the same write as the insert, with
     * other creates held off, so a limit it enforces holds under concurrent creates.
     */
    saveFaultRule?(rule: FaultRule, admit?: (kept: FaultRule[]) => void): Promise<void>;

    /** Every fault rule, oldest first. */
    listFaultRules?(): Promise<FaultRule[]>;

    /** Deletes the fault rules with these ids (default: all); answers how many were deleted. */
    deleteFaultRules?(ids?: string[]): Promise<number>;

    /**
     * Counts one use of a rule with `times`, once across every process sharing the store:
     * answers the uses left (the rule is deleted at 0), or null when it had none left or is gone.
     */
    claimFaultRule?(id: string): Promise<number | null>;

    /**
     * Optional (auto-relay's loop guard needs it): takes each of `keys` for `deliveryId`
     * unless another delivery holds it; true when all are this delivery's (new, or taken by
     * an earlier attempt of it), once across every process sharing the store. Keys older
     * than `forgetBefore` (Unix ms) are dropped first.
     */
    claimRelayKeys?(keys: readonly string[], deliveryId: string, now: number, forgetBefore: number): Promise<boolean>;

    /** Optional (the authentication check needs it): the check's answer kept with the email (JSON text), or null when none is kept yet or the email is gone. */
    keptAuthCheck?(messageId: string): Promise<string | null>;

    /**
     * Keeps `json` as the email's authentication check unless one is kept already; answers
     * the one kept after the write (null when the email is gone), once across every process.
     */
    keepAuthCheck?(messageId: string, json: string): Promise<string | null>;

    /** Releases connections. */
    close(): Promise<void>;
}
