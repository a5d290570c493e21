/**
 * The query table of the search language: five emails and what each query finds among
 * them, newest first. The record-store contract stores them as drafts, the API suite
 * ingests them as messages; both must give every answer.
 */

/** One email of the table. */
export interface SearchMail {
    key: string;
    /** The From header: an address, or `Name <address>`. */
    from: string;
    subject: string;
    text: string;
    html?: string;
    attachments?: Array<{ filename: string; contentType: string; bytes: number }>;
    tags?: string[];
    /** receivedAt is the table's T0 plus this, ms. */
    offset: number;
}

export const SEARCH_MAILS: SearchMail[] = [
    {
        key: 'order',
        from: 'Shop Newsletter <orders@shop.example>',
        subject: 'Your ORDER 4242 has shipped',
        text: 'Hello Bob,\nyour order ORD-4242 is on its way.\n',
        html: '<p>Track <a href="https://track.example/t/4242">your parcel</a> — Straße 12</p>',
        attachments: [{ filename: 'invoice-4242.pdf', contentType: 'application/pdf', bytes: 300 }],
        tags: ['orders', 'shop'],
        offset: 1
    },
    { key: 'welcome', from: 'Bjørn Ålesund <bob@mail.example>', subject: 'Welcome aboard', text: 'ÄÖÜ Grüße, welcome to the team\n', tags: ['welcome'], offset: 2 },
    {
        key: 'code',
        from: 'Billing Team <noreply@bank.example>',
        subject: 'Your code',
        text: 'Your verification code is 482913.\n',
        html: '<p>Do <b>not</b> share it</p>',
        attachments: [{ filename: 'logo.PNG', contentType: 'image/png', bytes: 100 }],
        offset: 3
    },
    { key: 'meeting', from: 'carol@corp.example', subject: 'Meeting at 10:30', text: 'Join at https://example.com/meet?id=77 sharp\n', offset: 4 },
    {
        key: 'quote',
        from: 'dave@quote.example',
        subject: 'Quotes',
        text: 'He said "hi" and C:\\path\\to\n',
        attachments: [{ filename: 'big.bin', contentType: 'application/octet-stream', bytes: 300 * 1024 }],
        offset: 5
    }
];

/** A query (or one made from the table's T0 and its inbox) and the keys it finds, newest first. */
export type SearchCase = [q: string | ((t0: number, inbox: string) => string), keys: string[]];

const ALL = ['quote', 'meeting', 'code', 'welcome', 'order'];

export const SEARCH_CASES: SearchCase[] = [
    ['', ALL],
    ['order', ['order']],
    ['ORD-4242', ['order']],
    ['4242', ['order']],
    ['body:4242', ['order']],
    ['subject:4242', ['order']],
    ['subject:"has shipped"', ['order']],
    ['subject:verification', []],
    ['body:verification', ['code']],
    ['from:shop', ['order']],
    ['from:SHOP.EXAMPLE', ['order']],
    ['-from:bank', ['quote', 'meeting', 'welcome', 'order']],
    // The sender's display name, as from: and as a term without a field.
    ['Shop Newsletter', ['order']],
    ['newsletter', ['order']],
    ['from:"Billing Team"', ['code']],
    ['from:BILLING', ['code']],
    ['"billing team"', ['code']],
    ['team', ['code', 'welcome']],
    ['from:team', ['code']],
    ['-from:"billing team"', ['quote', 'meeting', 'welcome', 'order']],
    ['-newsletter', ['quote', 'meeting', 'code', 'welcome']],
    ['from:ÅLESUND', ['welcome']],
    ['bjørn', ['welcome']],
    // A name and its address are two texts: no match across them; to: and subject: never read the name.
    ['from:"team noreply"', []],
    ['from:"team <noreply"', []],
    ['to:billing', []],
    ['subject:newsletter', []],
    ['body:parcel', ['order']],
    ['body:straße', ['order']],
    ['track.example', ['order']],
    ['share', ['code']],
    ['"do not share"', ['code']],
    ['"code is 482913"', ['code']],
    ['äöü', ['welcome']],
    ['GRÜSSE', []],
    ['grÜße', ['welcome']],
    ['welcome', ['welcome']],
    ['welcome -welcome', []],
    ['-order', ['quote', 'meeting', 'code', 'welcome']],
    ['verification -bank', []],
    ['quote.example', ['quote']],
    ['corp.example', ['meeting']],
    ['https://example.com/meet?id=77', ['meeting']],
    ['10:30', ['meeting']],
    ['meet?id', ['meeting']],
    ['"said \\"hi\\""', ['quote']],
    ['"c:\\\\path\\\\to"', ['quote']],
    ['a', ALL],
    ['zq', []],
    ['%', []],
    ['_', []],
    ['tag:welcome', ['welcome']],
    ['tag:WELCOME', ['welcome']],
    ['tag:welc', []],
    ['tag:orders tag:shop', ['order']],
    ['-tag:orders', ['quote', 'meeting', 'code', 'welcome']],
    ['tag:"no such tag!"', []],
    ['-tag:"no such tag!"', ALL],
    ['has:attachment', ['quote', 'code', 'order']],
    ['-has:attachment', ['meeting', 'welcome']],
    ['has:link', ['meeting', 'order']],
    ['has:code', ['code', 'order']],
    ['-has:code -has:link', ['quote', 'welcome']],
    ['filename:invoice', ['order']],
    ['filename:.png', ['code']],
    ['filename:PDF', ['order']],
    ['filename:"0-"', ['quote', 'code', 'order']],
    ['filename:pdf0-', []],
    ['larger:100K', ['quote']],
    ['smaller:100K', ['meeting', 'code', 'welcome', 'order']],
    [(t0) => `after:${t0 + 3}`, ['quote', 'meeting']],
    [(t0) => `before:${t0 + 3}`, ['welcome', 'order']],
    [(t0) => `after:${t0 + 1} before:${t0 + 5}`, ['meeting', 'code', 'welcome']],
    [(t0) => `-after:${t0 + 3}`, ['code', 'welcome', 'order']],
    [(t0) => `after:${new Date(t0 + 3).toISOString()}`, ['quote', 'meeting']],
    [(_t0, inbox) => inbox, []],
    [(_t0, inbox) => `to:${inbox.toUpperCase()}`, ALL],
    [(_t0, inbox) => `-to:${inbox}`, []],
    ['order has:attachment from:shop tag:shop -has:link', []],
    ['order has:attachment from:shop tag:shop', ['order']]
];
