import NIOHTTP1

extension HTTPResponseHead {
    /// Whether this is a redirect a session following redirects may follow: a status in
    /// ``RedirectStep/isRedirectStatus(_:)`` with a `Location`.
    var isRedirect: Bool {
        RedirectStep.isRedirectStatus(Int(status.code)) && headers.contains(name: "Location")
    }

    /// The number of body bytes a delegate will count, for progress: the `Content-Length`, or -1
    /// when it is missing or invalid, or when the body is compressed (it is delivered
    /// decompressed, so its `Content-Length` says nothing about the bytes counted).
    var expectedBodyLength: Int64 {
        guard headers.first(name: "Content-Encoding") == nil,
            let length = headers.first(name: "Content-Length").flatMap(Int64.init), length >= 0
        else {
            return -1
        }
        return length
    }
}
