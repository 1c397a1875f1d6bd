import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The next request of a redirect the session follows.
struct RedirectStep {
    /// The request to send: the redirect's URL, with the method, body and headers changed as
    /// AsyncHTTPClient (and browsers) change them.
    var request: URLRequest
    /// The URL redirected to, absolute.
    var target: URL
    /// Whether the method became `GET` and the body was dropped; a streamed body goes too.
    var dropsBody: Bool
    /// Whether the target is another origin: the ``credentialHeaders`` were removed from the
    /// request, and those of the session and an `Authorization` set by the transport (a
    /// challenge answer) must not be sent either, on this hop and the ones after it.
    var crossesOrigin: Bool

    /// The headers not sent to another origin than the request's.
    static let credentialHeaders = ["Origin", "Cookie", "Authorization", "Proxy-Authorization"]

    /// Whether the session follows a `Location` with this status: `301`, `302`, `303`, `307`
    /// and `308`.
    static func isRedirectStatus(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }
}
