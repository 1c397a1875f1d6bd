import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// The `Cookie` header for a request to `url`: the cookies the request already carries
    /// (`existing`, a header the caller set by hand, which is kept), then the jar's cookies for
    /// `url` whose names it does not set. `nil` when there is nothing to send.
    func cookieHeader(for url: URL, adding existing: String?) -> String? {
        guard let jar = configuration.cookieJar, let stored = jar.cookieHeader(for: url) else {
            return existing
        }
        guard let existing, !existing.isEmpty else { return stored }
        let ownNames = Set(
            existing.split(separator: ";").compactMap { pair -> Substring? in
                let name = pair.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces)
                return name.map { Substring($0) }
            })
        let added = stored.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return !ownNames.contains(Substring(name))
        }
        return added.isEmpty ? existing : ([existing] + added).joined(separator: "; ")
    }

    /// Gives the `Set-Cookie` headers of `response`, the answer to `urlRequest`, to the
    /// session's jar, unless the request said not to handle cookies. Without a jar, the first
    /// response that sets a cookie is logged once, since a program moved from `URLSession` may
    /// expect the cookie to be sent back.
    func storeCookies(from response: TransportResponse, of urlRequest: URLRequest) {
        guard let head = response.response.head, head.headers.contains(name: "Set-Cookie"), let url = urlRequest.url else { return }
        guard let jar = configuration.cookieJar else {
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
