/// One deliberate misbehaviour of ``FaultServer``, chosen by the request path
/// (`/<fault name>`, e.g. `/reset-mid-body`).
public enum Fault: String, Sendable, CaseIterable {
    /// A 200 head announcing 100,000 bytes, 1,000 of them, then a TCP reset.
    case resetMidBody = "reset-mid-body"
    /// The connection closes as soon as the request head has arrived.
    case closeBeforeResponse = "close-before-response"
    /// A 200 head announcing 1,000 bytes, then one byte every 100 ms.
    case slowDrip = "slow-drip"
    /// The request is read, and nothing is ever sent back.
    case silence = "silence"
    /// A `Content-Length` of 1,000 with 10 bytes, then a clean close.
    case shortContentLength = "short-content-length"
    /// A `Content-Length` of 5 followed by 500 bytes and a clean close.
    case longContentLength = "long-content-length"
    /// A `Content-Length` of 5 followed by 500 bytes, and the connection kept open: the extra
    /// bytes wait there for the next request's answer.
    case longContentLengthKeptOpen = "long-content-length-kept-open"
    /// A `Content-Length` of 5 with its 5 bytes, then, 300 ms later, 500 more bytes on the
    /// connection kept open: they arrive while the next request on it waits for its answer.
    case lateBytesPastContentLength = "late-bytes-past-content-length"
    /// A status line that is not HTTP.
    case malformedStatusLine = "malformed-status-line"
    /// `Transfer-Encoding: chunked` with a chunk size that is not hexadecimal.
    case badChunking = "bad-chunking"
    /// `Content-Encoding: gzip` over about 16 KiB that expand to 16 MiB of zeros.
    case gzipBomb = "gzip-bomb"
    /// A head with 20,000 headers (about 1 MiB).
    case headerFlood = "header-flood"
    /// A 302 to itself, forever.
    case redirectLoop = "redirect-loop"
    /// Reads the request head, then stops reading the body and never answers.
    case stalledUpload = "stalled-upload"
    /// A 200 body of 16 bytes whose `Content-Disposition` names a file outside any directory;
    /// the name is the `name` query parameter, percent-decoded.
    case hostileFileName = "hostile-file-name"
    /// An endless 200 body with no `Content-Length`, 64 KiB at a time.
    case endlessBody = "endless-body"
    /// Once half the request body has arrived (as its `Content-Length` says), a 200 of 2 bytes
    /// that keeps the connection open; then, 0 to 500 µs later (at random), the connection
    /// closes: a server that answers before the body's end and hangs up right after.
    case answerThenClose = "answer-then-close"
}
