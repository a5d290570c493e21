/**
 * The four deterministic message profiles of the benchmarks. Every byte is fixed
 * by the profile and the message's sequence number (a seeded PRNG, no clock, no
 * randomness), so two runs and two servers see exactly the same mail.
 */

/** Names of the profiles, in table order. */
export const PROFILE_NAMES = ['text-1k', 'alt-10k', 'att-100k', 'att-1m'] as const;
export type ProfileName = typeof PROFILE_NAMES[number];

/** Inboxes the recipients are spread over (the issue: 100). */
export const INBOX_SPREAD = 100;

/** What a profile is and how big its messages are. */
export interface Profile {
    name: ProfileName;
    description: string;
    /** Approximate size of one message, bytes (each message differs by a few header bytes). */
    approxBytes: number;
    /** One message: `seq` makes Message-ID and subject unique; `to` is the recipient address. */
    message(seq: number, to: string, tag?: string): Buffer;
    /** The same message as header block and the shared body (no copy of the body). */
    parts(seq: number, to: string, tag?: string): [Buffer, Buffer];
}

/** mulberry32: tiny, fast and good enough to make incompressible, repeatable bytes (or any repeatable draw). */
export function prng(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const WORDS = ('lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore ' +
    'et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea ' +
    'commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur ' +
    'invoice order shipped account password reset confirm welcome newsletter receipt').split(' ');

/** Text of about `bytes` bytes in lines of at most 72 characters (CRLF), none starting with a dot. */
function text(bytes: number, seed: number): string {
    const random = prng(seed);
    const lines: string[] = [];
    let size = 0;
    let line = '';
    while (size + line.length < bytes) {
        const word = WORDS[Math.floor(random() * WORDS.length)];
        if (line.length + word.length + 1 > 72) {
            lines.push(line);
            size += line.length + 2;
            line = '';
        }

        line = line ? `${line} ${word}` : word;
    }

    lines.push(line);
    return lines.join('\r\n');
}

/** HTML of about `bytes` bytes: paragraphs of text, lines of at most 76 characters. */
function html(bytes: number, seed: number): string {
    const paragraphs: string[] = [];
    let size = 60;
    for (let i = 0; size < bytes; i++) {
        const p = `<p>\r\n${text(Math.min(400, bytes - size), seed + i)}\r\n</p>`;
        paragraphs.push(p);
        size += p.length + 2;
    }

    return `<html><body>\r\n<h1>Bench</h1>\r\n${paragraphs.join('\r\n')}\r\n</body></html>`;
}

/** `count` repeatable, incompressible bytes. */
function bytesOf(count: number, seed: number): Buffer {
    const random = prng(seed);
    const buffer = Buffer.alloc(count);
    for (let i = 0; i < count; i++) {
        buffer[i] = Math.floor(random() * 256);
    }

    return buffer;
}

/** Base64 in 76-character lines, as mail clients send it. */
function base64Lines(content: Buffer): string {
    return content.toString('base64').replace(/.{1,76}/g, '$&\r\n').replace(/\r\n$/, '');
}

/** The Subject of message `seq` of a profile (unique per message, to find it in a server that keeps ids of its own). */
export function subjectOf(profile: ProfileName, seq: number): string {
    return `Bench ${profile} message ${seq}`;
}

function headers(profile: ProfileName, seq: number, to: string, tag: string, contentType: string): string {
    return [
        `From: Bench Sender <sender${seq % 7}@bench.test>`,
        `To: <${to}>`,
        `Subject: ${subjectOf(profile, seq)}`,
        'Date: Tue, 21 Nov 2023 10:00:00 +0000',
        `Message-ID: <${tag}.${seq}@bench.test>`,
        'MIME-Version: 1.0',
        `Content-Type: ${contentType}`
    ].join('\r\n');
}

function build(name: ProfileName, description: string, contentType: string, body: string): Profile {
    const bodyBytes = Buffer.from(`\r\n${body}\r\n`);
    const probe = Buffer.byteLength(headers(name, 0, 'inbox-00@bench.test', 'tag', contentType)) + bodyBytes.length;
    return {
        name,
        description,
        approxBytes: probe,
        message(seq, to, tag = 'bench') {
            return Buffer.concat(this.parts(seq, to, tag));
        },
        parts(seq, to, tag = 'bench') {
            return [Buffer.from(`${headers(name, seq, to, tag, contentType)}\r\n`), bodyBytes];
        }
    };
}

/** Multipart/mixed of a short text and one attachment, about `total` bytes in all. */
function withAttachment(name: ProfileName, total: number, seed: number): Profile {
    // 57 raw bytes become one 78-byte base64 line (76 + CRLF).
    const overhead = 700;
    const raw = Math.floor((total - overhead) * 57 / 78);
    const boundary = `bench-mixed-${name}`;
    const body = [
        'This is a multi-part message in MIME format.',
        `--${boundary}`,
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: 7bit',
        '',
        text(300, seed),
        `--${boundary}`,
        'Content-Type: application/pdf; name="report.pdf"',
        'Content-Transfer-Encoding: base64',
        'Content-Disposition: attachment; filename="report.pdf"',
        '',
        base64Lines(bytesOf(raw, seed + 1)),
        `--${boundary}--`
    ].join('\r\n');
    return build(name, `multipart/mixed: short text + ${Math.round(raw / 1024)} KiB application/pdf attachment (base64)`,
        `multipart/mixed; boundary="${boundary}"`, body);
}

function makeProfiles(): Record<ProfileName, Profile> {
    const alternative = 'bench-alternative';
    return {
        'text-1k': build('text-1k', 'text/plain, 7bit', 'text/plain; charset=utf-8', text(730, 1)),
        'alt-10k': build('alt-10k', 'multipart/alternative: text/plain + text/html', `multipart/alternative; boundary="${alternative}"`, [
            `--${alternative}`,
            'Content-Type: text/plain; charset=utf-8',
            'Content-Transfer-Encoding: 7bit',
            '',
            text(4200, 2),
            `--${alternative}`,
            'Content-Type: text/html; charset=utf-8',
            'Content-Transfer-Encoding: 7bit',
            '',
            html(5300, 3),
            `--${alternative}--`
        ].join('\r\n')),
        'att-100k': withAttachment('att-100k', 100 * 1024, 4),
        'att-1m': withAttachment('att-1m', 1024 * 1024, 6)
    };
}

let cached: Record<ProfileName, Profile> | undefined;

/** The profiles, built once per process. */
export function profiles(): Record<ProfileName, Profile> {
    cached ??= makeProfiles();
    return cached;
}

/** The recipient of message `seq`: spread round-robin over INBOX_SPREAD inboxes named `<prefix>-<nn>`. */
export function recipientOf(prefix: string, seq: number): string {
    return `${prefix}-${String(seq % INBOX_SPREAD).padStart(2, '0')}@bench.test`;
}
