import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A jar on a Foundation `HTTPCookieStorage`: what the jar stores, the storage shows, and what
/// other code puts in the storage, the jar sends.
@Suite("Cookie jar: Foundation storage")
struct FoundationCookieStoreTests {
    @Test("Cookies from responses appear in the storage, in Foundation's form")
    func jarToStorage() throws {
        let storage = CookieJarFixture.freshStorage()
        let jar = CookieJar(storage: storage)
        let now = Date()
        jar.store(
            ["host=1; HttpOnly", "domain=2; Domain=example.com; Path=/docs", "secure=3; Secure; Max-Age=60", "session=4; SameSite=Lax"],
            from: "https://www.example.com/",
            at: now
        )
        let byName = Dictionary(uniqueKeysWithValues: (storage.cookies ?? []).map { ($0.name, $0) })
        #expect(byName.keys.sorted() == ["domain", "host", "secure", "session"])

        let host = try #require(byName["host"])
        #expect(host.domain == "www.example.com")
        #expect(host.path == "/")
        #expect(host.isHTTPOnly)
        #expect(!host.isSecure)
        #expect(host.expiresDate == nil)
        #expect(host.isSessionOnly)

        let domain = try #require(byName["domain"])
        #expect(domain.domain == ".example.com")
        #expect(domain.path == "/docs")
        #expect(!domain.isHTTPOnly)

        let secure = try #require(byName["secure"])
        #expect(secure.isSecure)
        #expect(!secure.isSessionOnly)
        #expect(secure.expiresDate.map { abs($0.timeIntervalSince(now) - 60) < 1 } == true)

        // The storage's own matching agrees on the domain forms (Linux's checks neither Secure
        // nor paths, so only the names are compared, for a host the domain cookie covers).
        let fromStorage = storage.cookies(for: CookieJarFixture.url("https://a.example.com/docs")) ?? []
        #expect(fromStorage.map(\.name) == ["domain"])
    }

    @Test("Cookies other code puts in the storage are sent, with the jar's own matching")
    func storageToJar() throws {
        let storage = CookieJarFixture.freshStorage()
        let jar = CookieJar(storage: storage)
        jar.store(["mine=1"], from: "http://www.example.com/")
        storage.setCookie(try #require(HTTPCookie(properties: [.name: "d", .value: "1", .domain: ".example.com", .path: "/"])))
        storage.setCookie(try #require(HTTPCookie(properties: [.name: "h", .value: "1", .domain: "www.example.com", .path: "/"])))
        storage.setCookie(try #require(HTTPCookie(properties: [.name: "s", .value: "1", .domain: "www.example.com", .path: "/", .secure: "TRUE"])))
        storage.setCookie(try #require(HTTPCookie(properties: [.name: "p", .value: "1", .domain: "www.example.com", .path: "/docs"])))

        // Cookies the jar did not store count as the oldest, by name among themselves.
        #expect(jar.header(for: "http://www.example.com/") == "d=1; h=1; mine=1")
        #expect(jar.header(for: "https://www.example.com/docs/x") == "p=1; d=1; h=1; s=1; mine=1")
        #expect(jar.header(for: "http://a.www.example.com/") == "d=1")
        #expect(jar.cookies.count == 5)

        // Deleting through the storage is seen by the jar, and the other way round.
        storage.deleteCookie(try #require(storage.cookies?.first { $0.name == "h" }))
        #expect(jar.header(for: "http://www.example.com/") == "d=1; mine=1")
        jar.deleteCookie(try #require(HTTPCookie(properties: [.name: "d", .value: "", .domain: ".example.com", .path: "/"])))
        #expect(storage.cookies?.map(\.name).sorted() == ["mine", "p", "s"])
        jar.removeAll()
        #expect(storage.cookies?.isEmpty == true)
    }

    @Test("Replacing a cookie removes both of its domain forms from the storage")
    func replacementRemovesBothForms() throws {
        let storage = CookieJarFixture.freshStorage()
        let jar = CookieJar(storage: storage)
        storage.setCookie(try #require(HTTPCookie(properties: [.name: "a", .value: "host", .domain: "example.com", .path: "/"])))
        storage.setCookie(try #require(HTTPCookie(properties: [.name: "a", .value: "domain", .domain: ".example.com", .path: "/"])))
        jar.store(["a=new; Domain=example.com"], from: "http://example.com/")
        let stored = storage.cookies ?? []
        #expect(stored.map(\.value) == ["new"])
        #expect(stored.map(\.domain) == [".example.com"])
    }

    @Test("A cookie converts to HTTPCookie and back unchanged")
    func roundTrip() throws {
        let created = Date(timeIntervalSince1970: 1_000)
        let expires = Date(timeIntervalSince1970: 4_000_000_000)
        let cookies = [
            StoredCookie(
                name: "a", value: "1", domain: "example.com", path: "/", hostOnly: false, secure: true, httpOnly: true, sameSite: nil,
                expires: expires, created: created, lastAccess: created
            ),
            StoredCookie(
                name: "b", value: "x=y", domain: "www.example.com", path: "/p", hostOnly: true, secure: false, httpOnly: false, sameSite: nil,
                expires: nil, created: created, lastAccess: created
            ),
            StoredCookie(
                name: "c", value: "", domain: "::1", path: "/", hostOnly: true, secure: false, httpOnly: false, sameSite: nil, expires: nil,
                created: created, lastAccess: created
            ),
        ]
        for cookie in cookies {
            let httpCookie = try #require(cookie.httpCookie())
            let back = try #require(StoredCookie(httpCookie, created: created, lastAccess: created))
            #expect(back == cookie)
        }
    }

    @Test("HTTPCookies that would break the Cookie header are refused")
    func unsafeCookies() {
        let properties: [[HTTPCookiePropertyKey: Any]] = [
            [.name: "a", .value: "1; b=2", .domain: "h.example", .path: "/"],
            [.name: "a=b", .value: "1", .domain: "h.example", .path: "/"],
            [.name: "a", .value: "1\r\nX: y", .domain: "h.example", .path: "/"],
            [.name: "a", .value: "1", .domain: "", .path: "/"],
            [.name: "a", .value: "1", .domain: ".", .path: "/"],
        ]
        var checked = 0
        for cookieProperties in properties {
            // Apple's Foundation refuses some of these itself; Linux's makes them all.
            guard let cookie = HTTPCookie(properties: cookieProperties) else { continue }
            #expect(StoredCookie(cookie, created: Date(), lastAccess: Date()) == nil)
            checked += 1
        }
        #expect(checked > 0)
    }
}
