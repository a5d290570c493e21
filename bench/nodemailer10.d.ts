// The current nodemailer, installed beside 6.x as the npm alias `nodemailer10` for the send
// latency bench: its transport API is 6.x's for what the bench uses.
declare module 'nodemailer10' {
    export * from 'nodemailer';
}
