/** The emails the GET-one benchmark stores in every server it reads from (ours and MailDev get the very same ones). */

/** Emails stored before the run: enough for a realistic table; the middle one is fetched. */
export const GET_ONE_STORED = 200;
/** In a smoke run: a few. */
export const GET_ONE_STORED_SMOKE = 10;
/** Inbox prefix and Message-ID tag of the stored emails. */
export const GET_ONE_TAG = 'getone';
/** The profile of the stored emails (10 KB multipart/alternative). */
export const GET_ONE_PROFILE = 'alt-10k';
