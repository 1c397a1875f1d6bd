import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's cookie jar as an exchange uses it: the jar's cookies added to each attempt's
/// `Cookie` header, and each response's `Set-Cookie` fields given to the jar.
struct CookieStage: Sendable {
    /// The session's ``Session/Configuration/cookieJar``, if any.
    let jar: CookieJar?

    /// The `Cookie` header for a request to `url`: the cookies the request already carries
    /// (`existing`, a header the caller set by hand, which is kept), then the jar's cookies for
    /// `url` whose names it does not set. `nil` when there is nothing to send.
    func header(for url: URL, adding existing: String?) -> String? {
        guard let jar else { return existing }
        return jar.cookieHeader(for: url, adding: existing)
    }

    /// Gives the `Set-Cookie` headers of `response`, the answer to `urlRequest`, to the jar,
    /// unless the request said not to handle cookies. Without a jar, the first response that sets
    /// a cookie is logged once, since a program moved from `URLSession` may expect the cookie to
    /// be sent back.
    func store(from response: TransportResponse, of urlRequest: URLRequest) {
        guard let head = response.response.head, head.headers.contains(name: "Set-Cookie"), let url = urlRequest.url else { return }
        guard let jar else {
            SessionLog.noticeOnce(
                "unstored cookie",
                """
                A response from \(url.host ?? "") set a cookie, but the session has no cookie jar, so it is not sent back \
                (set Session.Configuration.cookieJar to keep cookies; this notice is logged once)
                """)
            return
        }
        guard urlRequest.httpShouldHandleCookies else { return }
        jar.storeCookies(fromSetCookieHeaders: head.headers["Set-Cookie"], for: url, mainDocumentURL: urlRequest.mainDocumentURL)
    }
}
