import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a jar under test keeps its cookies: the jar's own memory, or a Foundation storage. Most
/// jar tests run on both, since both must behave the same.
enum CookieBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case foundation

    var testDescription: String { rawValue }

    /// A new, empty jar on this backend. The Foundation one uses a fresh in-memory storage
    /// (`URLSessionConfiguration.ephemeral` makes a new one each time), never the shared one,
    /// which writes to disk on Linux.
    func makeJar(acceptPolicy: HTTPCookie.AcceptPolicy = .always) -> CookieJar {
        makeJarAndStorage(acceptPolicy: acceptPolicy).jar
    }

    /// A new jar and, for the Foundation backend, the storage it keeps its cookies in.
    func makeJarAndStorage(acceptPolicy: HTTPCookie.AcceptPolicy = .always) -> (jar: CookieJar, storage: HTTPCookieStorage?) {
        switch self {
        case .memory:
            return (CookieJar(acceptPolicy: acceptPolicy), nil)
        case .foundation:
            let storage = CookieJarFixture.freshStorage()
            return (CookieJar(storage: storage, acceptPolicy: acceptPolicy), storage)
        }
    }
}

/// Small helpers for the cookie tests.
enum CookieJarFixture {
    /// A new, empty `HTTPCookieStorage` in memory. (`HTTPCookieStorage.shared` is never touched:
    /// on Linux, merely reading it creates a directory under `~/.local/share`.)
    static func freshStorage() -> HTTPCookieStorage {
        let storage = URLSessionConfiguration.ephemeral.httpCookieStorage!
        precondition((storage.cookies ?? []).isEmpty, "expected a new, empty storage")
        return storage
    }

    /// The URL `string` names; traps on a typo in a test.
    static func url(_ string: String) -> URL {
        guard let url = URL(string: string) else { preconditionFailure("not a URL: \(string)") }
        return url
    }

    /// A UTC date from its parts.
    static func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return calendar.date(from: components)!
    }

    /// "name domain path" for each cookie, with "host-only" or "domain", sorted: a compact view
    /// of what a jar holds.
    static func describe(_ cookies: [HTTPCookie]) -> [String] {
        cookies.map { cookie in
            let kind = cookie.domain.hasPrefix(".") ? "domain" : "host-only"
            let domain = cookie.domain.hasPrefix(".") ? String(cookie.domain.dropFirst()) : cookie.domain
            return "\(cookie.name)=\(cookie.value) \(domain) \(cookie.path) \(kind)"
        }.sorted()
    }
}

extension CookieJar {
    /// Stores the cookies of a response to `url` (one `Set-Cookie` value each).
    func store(_ headers: [String], from url: String, mainDocument: String? = nil, at now: Date = Date()) {
        storeCookies(
            fromSetCookieHeaders: headers,
            for: CookieJarFixture.url(url),
            mainDocumentURL: mainDocument.map(CookieJarFixture.url),
            now: now
        )
    }

    /// The `Cookie` header a request to `url` would carry at `now`.
    func header(for url: String, at now: Date = Date()) -> String? {
        cookieHeader(for: CookieJarFixture.url(url), now: now)
    }
}
