// A message for the headers endpoint (docs/api.md, "Header fields") and what it must answer, shared by
// the plugin's API suite and the end-to-end test.

/** A message with every kind of header field the headers endpoint handles, and a MIME part with headers of its own. */
export const HEADERS_MESSAGE = [
    'Received: from relay1.example.test by mx.example.test',
    'Received: from sender.example.test',
    '\tby relay1.example.test; Mon, 1 Jan 2024 00:00:00 +0000',
    'From: =?UTF-8?Q?J=C3=B6rg?= <jorg@example.test>',
    'To: headers@example.test',
    'Subject: =?UTF-8?B?WW91ciBjb2Rl?= =?UTF-8?Q?_is_123456?=',
    'Message-ID: <headers-test@example.test>',
    'X-Empty:',
    'X-Raw-UTF8: Grüße',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'X-Part-Header: not listed',
    '',
    'Body: not a header.',
    '--b1--',
    ''
].join('\r\n');

/** The answer for HEADERS_MESSAGE. */
export const HEADERS_EXPECTED = [
    { name: 'Received', value: 'from relay1.example.test by mx.example.test' },
    { name: 'Received', value: 'from sender.example.test\tby relay1.example.test; Mon, 1 Jan 2024 00:00:00 +0000' },
    { name: 'From', value: 'Jörg <jorg@example.test>' },
    { name: 'To', value: 'headers@example.test' },
    { name: 'Subject', value: 'Your code is 123456' },
    { name: 'Message-ID', value: '<headers-test@example.test>' },
    { name: 'X-Empty', value: '' },
    { name: 'X-Raw-UTF8', value: 'Grüße' },
    { name: 'MIME-Version', value: '1.0' },
    { name: 'Content-Type', value: 'multipart/mixed; boundary="b1"' }
];
