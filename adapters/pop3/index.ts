// Re-exports only: the POP3 adapter, `inbox-capture/pop3`.
export * from './pop3-listener';
export { DEFAULT_POP3_PORT, MAILDROP_SIZE, MAX_POP3_LINE_BYTES } from './pop3-defaults';
