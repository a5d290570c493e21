// Typings of the one libmime method the core uses (libmime ships none).

declare module 'libmime' {
    const libmime: {
        /**
         * Decodes the RFC 2047 encoded-words of a header value; adjacent words join
         * without the white space between them. A method: call it on the module.
         */
        decodeWords(value: string): string;
    };
    export default libmime;
}
