// inbox-capture-client/playwright: @playwright/test's `test` with an `inbox` fixture, a
// fresh inbox for every test that uses it, deleted after it. Configured from the
// environment (INBOX_CAPTURE_URL, INBOX_CAPTURE_API_KEY, INBOX_CAPTURE_MAIL_DOMAIN) or the
// `inboxCapture` option of `test.use()` and the config's `use`, which wins.

import { test as base, expect } from '@playwright/test';
import { DEFAULT_MAIL_DOMAIN, InboxCaptureClient, type Email, type WaitForEmailOptions } from 'inbox-capture-client';

/** Where the service is and how to reach it: the `inboxCapture` fixture option. Each falls back to its variable. */
export interface InboxCaptureOptions {
    /** The service's origin (plus a route prefix if it has one); default `INBOX_CAPTURE_URL`, else `http://127.0.0.1:3000`. */
    url?: string;
    /** An API key; default `INBOX_CAPTURE_API_KEY`. Required one way or the other. */
    apiKey?: string;
    /** The domain of each test's address; default `INBOX_CAPTURE_MAIL_DOMAIN`, else `inbox-capture.test`. */
    mailDomain?: string;
    /** What every inbox name starts with (a-z 0-9 . _ -), before its random part; default none. */
    prefix?: string;
}

/** What a test gets as `inbox`. */
export interface InboxFixture {
    /** The inbox's name: the prefix, then random characters. */
    inbox: string;
    /** `<inbox>@<mailDomain>`: give it to the application under test. */
    address: string;
    /** A client of the same service, for anything else. */
    client: InboxCaptureClient;
    /** The newest email of this inbox matching `options`, waiting for it (the client's waitForEmail, cancelled when the test ends). */
    waitForEmail(options?: Omit<WaitForEmailOptions, 'inbox'>): Promise<Email>;
}

/** The fixtures `test` adds. */
export interface InboxCaptureFixtures {
    inbox: InboxFixture;
}

/** The option `test` adds. */
export interface InboxCaptureTestOptions {
    inboxCapture: InboxCaptureOptions;
}

/** Where the standalone service listens unless told otherwise (docs/operations.md, "Running the service"). */
const DEFAULT_URL = 'http://127.0.0.1:3000';

/** The settings in force: the option's, else the environment's, else the defaults. */
function settle(options: InboxCaptureOptions): Required<Omit<InboxCaptureOptions, 'prefix'>> & { prefix?: string } {
    const apiKey = options.apiKey ?? process.env.INBOX_CAPTURE_API_KEY;
    if (!apiKey) {
        throw new Error('inbox-capture-client/playwright: no API key; set INBOX_CAPTURE_API_KEY, or test.use({ inboxCapture: { apiKey } })');
    }

    return {
        url: options.url ?? process.env.INBOX_CAPTURE_URL ?? DEFAULT_URL,
        apiKey,
        mailDomain: options.mailDomain ?? process.env.INBOX_CAPTURE_MAIL_DOMAIN ?? DEFAULT_MAIL_DOMAIN,
        prefix: options.prefix
    };
}

/** @playwright/test's `test` with the `inbox` fixture and the `inboxCapture` option. */
export const test = base.extend<InboxCaptureFixtures & InboxCaptureTestOptions>({
    inboxCapture: [{}, { option: true }],

    inbox: async ({ inboxCapture }, use) => {
        const settings = settle(inboxCapture);
        const client = new InboxCaptureClient({ baseUrl: settings.url, apiKey: settings.apiKey });
        const { inbox, address } = client.newInbox({ prefix: settings.prefix, domain: settings.mailDomain });
        // A test that times out leaves its wait behind: it ends with the test, not a minute later.
        const ended = new AbortController();
        const waitForEmail = (options: Omit<WaitForEmailOptions, 'inbox'> = {}) => client.waitForEmail({
            ...options,
            inbox,
            signal: options.signal ? AbortSignal.any([options.signal, ended.signal]) : ended.signal
        });

        try {
            await use({ inbox, address, client, waitForEmail });
        }
        finally {
            ended.abort();
            await client.deleteInbox(inbox);
        }
    }
});

export { expect };
