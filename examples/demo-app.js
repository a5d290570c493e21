'use strict';

// A stand-in for the application under test in the client examples: a sign-up page
// that mails a code and a confirmation link through SMTP (nodemailer), as real apps do.
//
//   GET  /          the sign-up form
//   POST /signup    email=<address>: mails the code and the link, shows the code form
//   POST /verify    email=<address>&code=<code>: "Code accepted" or 400
//   GET  /confirm   ?token=<token>: "Address confirmed" or 404

const Crypto = require('node:crypto');
const Http = require('node:http');
const Nodemailer = require('nodemailer');

/** Largest form body read, bytes: an address and a code. */
const MAX_FORM_BYTES = 4096;

const page = (title, body = '') => `<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1>${body}`;
const escape = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function readForm(req) {
    return new Promise((resolve, reject) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk) => {
            body += chunk;
            if (body.length > MAX_FORM_BYTES) {
                req.destroy();
                reject(new Error('form too large'));
            }
        });
        req.on('end', () => resolve(new URLSearchParams(body)));
        req.on('error', reject);
    });
}

/** Starts the demo app on a free loopback port; it mails through the SMTP server at `smtpHost:smtpPort`. */
async function startDemoApp({ smtpPort, smtpHost = '127.0.0.1' }) {
    const transport = Nodemailer.createTransport({ host: smtpHost, port: smtpPort, secure: false, ignoreTLS: true });
    const signups = new Map();   // address -> { code, token }

    const routes = {
        'GET /': async () => [200, page('Sign up', '<form method="post" action="/signup"><input name="email" type="email"><button>Sign up</button></form>')],
        'POST /signup': async (req) => {
            const email = (await readForm(req)).get('email') ?? '';
            const code = String(Crypto.randomInt(100000, 1000000));
            const token = Crypto.randomBytes(16).toString('hex');
            signups.set(email, { code, token });
            const link = `${url}/confirm?token=${token}`;
            await transport.sendMail({
                from: 'Demo App <noreply@demo.test>',
                to: email,
                subject: 'Confirm your sign-up',
                text: `Your code is ${code}.\nOr confirm your address: ${link}\n`,
                html: `<p>Your code is <b>${code}</b>.</p><p><a href="${link}">Confirm your address</a></p>`
            });
            const form = `<form method="post" action="/verify"><input type="hidden" name="email" value="${escape(email)}"><input name="code"><button>Verify</button></form>`;
            return [200, page('Check your mail', form)];
        },
        'POST /verify': async (req) => {
            const form = await readForm(req);
            const ok = signups.get(form.get('email'))?.code === form.get('code');
            return ok ? [200, page('Code accepted')] : [400, page('Wrong code')];
        },
        'GET /confirm': async (req) => {
            const token = new URL(req.url, url).searchParams.get('token');
            const ok = [...signups.values()].some((s) => s.token === token);
            return ok ? [200, page('Address confirmed')] : [404, page('Unknown link')];
        }
    };

    const server = Http.createServer(async (req, res) => {
        const route = routes[`${req.method} ${new URL(req.url, 'http://x').pathname}`];
        try {
            const [status, html] = route ? await route(req) : [404, page('Not found')];
            res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(html);
        }
        catch (err) {
            res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err.message));
        }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    // The routes read it when requests come, which is after this line.
    const url = `http://127.0.0.1:${server.address().port}`;
    return {
        url,
        close: () => new Promise((resolve) => {
            transport.close();
            server.closeAllConnections();
            server.close(resolve);
        })
    };
}

module.exports = { startDemoApp };
