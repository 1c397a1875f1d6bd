import Foundation
import Testing

@testable import Moya

@Suite("The default Accept-Language: the user's languages, from the POSIX locale outside Apple platforms")
struct AcceptLanguageTests {
    /// The languages the variables `environment` name.
    private static func languages(_ environment: [String: String]) -> [String] {
        AcceptLanguage.posixLanguages { environment[$0] }
    }

    @Test("The locale names the language: LC_ALL, then LC_MESSAGES, then LANG")
    func locale() {
        #expect(Self.languages(["LANG": "de_DE.UTF-8"]) == ["de-DE"])
        #expect(Self.languages(["LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_CA.UTF-8"]) == ["fr-CA"])
        #expect(Self.languages(["LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_CA.UTF-8", "LC_ALL": "pt_BR"]) == ["pt-BR"])
        // An empty variable is not set.
        #expect(Self.languages(["LANG": "it_IT", "LC_ALL": ""]) == ["it-IT"])
        #expect(Self.languages(["LANG": "sr_RS@latin"]) == ["sr-RS"])
        #expect(Self.languages(["LANG": "es_419.UTF-8"]) == ["es-419"])
        #expect(Self.languages(["LANG": "ja"]) == ["ja"])
    }

    @Test("LANGUAGE lists the languages in order, unless the locale is C or POSIX")
    func languageList() {
        #expect(Self.languages(["LANG": "de_DE.UTF-8", "LANGUAGE": "fr:de_DE:en:fr"]) == ["fr", "de-DE", "en"])
        #expect(Self.languages(["LANG": "de_DE.UTF-8", "LANGUAGE": ""]) == ["de-DE"])
        #expect(Self.languages(["LANG": "de_DE.UTF-8", "LANGUAGE": "C:"]) == ["de-DE"])
        #expect(Self.languages(["LANG": "C.UTF-8", "LANGUAGE": "fr:de"]).isEmpty)
        #expect(Self.languages(["LC_ALL": "POSIX", "LANG": "de_DE.UTF-8"]).isEmpty)
        #expect(Self.languages([:]).isEmpty)
    }

    @Test("Names that are not languages are left out")
    func notLanguages() {
        for name in ["C", "POSIX", "C.UTF-8", "", "_DE", "deutsch_DE", "1a_DE", "de-DE\r\nX: y"] {
            #expect(AcceptLanguage.languageTag(name) == nil, "\(name)")
        }
        #expect(AcceptLanguage.languageTag("de_Deutschland") == "de")
        #expect(AcceptLanguage.languageTag("EN_us") == "en-US")
    }

    @Test("The header's value: at most six languages, each a tenth less preferred; English for none")
    func value() {
        #expect(AcceptLanguage.value(for: []) == "en;q=1.0")
        #expect(AcceptLanguage.value(for: ["de-DE", "en"]) == "de-DE;q=1.0, en;q=0.9")
        let many = AcceptLanguage.value(for: ["ax", "bx", "cx", "dx", "ex", "fx", "gx"])
        #expect(many.split(separator: ",").count == 6)
        #expect(many.hasSuffix("fx;q=0.5"))
    }

    @Test("Every way Moya 15 code reads the default headers gives the same value")
    func defaultHeaders() {
        let value = AcceptLanguage.current
        #expect(Session.defaultHTTPHeaders["Accept-Language"] == value)
        #expect(HTTPHeader.defaultAcceptLanguage == .acceptLanguage(value))
        #expect(HTTPHeaders.default.value(for: "accept-language") == value)
        #expect(value == AcceptLanguage.value(for: AcceptLanguage.preferredLanguages()))
        #if !canImport(Darwin)
        let environment = ProcessInfo.processInfo.environment
        #expect(value == AcceptLanguage.value(for: AcceptLanguage.posixLanguages { environment[$0] }))
        #endif
    }
}
