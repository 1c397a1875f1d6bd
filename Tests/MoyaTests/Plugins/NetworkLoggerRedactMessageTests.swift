import Foundation
import Testing

@testable import Moya

private typealias Redaction = NetworkLoggerPlugin.Configuration.Redaction

@Suite("Redaction.redact(url:headers:body:): a request's or response's secrets hidden, and reported")
struct NetworkLoggerRedactMessageTests {
    @Test("A URL's password and hidden query and fragment parameters are hidden and reported as written")
    func url() throws {
        let url = try #require(URL(string: "https://ann:pa%24%24word@api.example.com/search?q=moya&api_key=k%2B123&page=2#access_token=frag-456&state=x"))
        let redacted = Redaction.default.redact(url: url)
        #expect(redacted.url == "https://ann:***@api.example.com/search?q=moya&api_key=***&page=2#access_token=***&state=x")
        #expect(Set(redacted.hiddenValues) == ["pa%24%24word", "k%2B123", "frag-456"])
        #expect(redacted.headers.isEmpty)
        #expect(redacted.body == nil)
    }

    @Test("The URL is the one the logger writes")
    func urlAsLogged() throws {
        let url = try #require(URL(string: "https://user:secret@api.example.com/a?token=t&x=1"))
        #expect(Redaction.default.redact(url: url).url == Redaction.default.describe(url))
    }

    @Test("Hidden headers keep an authorization's scheme; cookies are reported one by one")
    func headers() {
        let redacted = Redaction.default.redact(headers: [
            "authorization": "Bearer header-token-1",
            "Cookie": "session=cookie-1; theme=dark",
            "Set-Cookie": "id=cookie-2; Path=/; HttpOnly",
            "Accept": "application/json",
        ])
        #expect(
            redacted.headers == [
                "authorization": "Bearer ***",
                "Cookie": "***",
                "Set-Cookie": "***",
                "Accept": "application/json",
            ])
        #expect(
            Set(redacted.hiddenValues) == [
                "header-token-1", "session=cookie-1; theme=dark", "cookie-1", "dark", "id=cookie-2; Path=/; HttpOnly", "cookie-2",
            ])
        #expect(redacted.url == nil)
    }

    @Test("Hidden pairs in the values of other headers are hidden too: a Location's query, a Link's URL")
    func pairsInOtherHeaders() {
        let redacted = Redaction.default.redact(headers: [
            "Location": "/next?session_id=location-1&page=2",
            "Link": #"<https://api.example.com/items?page=2&access_token=link-2>; rel="next""#,
        ])
        #expect(redacted.headers["Location"] == "/next?session_id=***&page=2")
        #expect(redacted.headers["Link"] == #"<https://api.example.com/items?page=2&access_token=***>; rel="next""#)
        #expect(Set(redacted.hiddenValues) == ["location-1", "link-2"])
    }

    @Test("JSON and form bodies are hidden as the Content-Type (any case) tells, or as they look")
    func bodies() {
        let json = Data(#"{"user": {"name": "ann", "password": "json-1"}, "next": "/p?token=json-2"}"#.utf8)
        let redactedJSON = Redaction.default.redact(headers: ["content-type": "application/json; charset=utf-8"], body: json)
        #expect(redactedJSON.body == Data(#"{"user": {"name": "ann", "password": "***"}, "next": "/p?token=***"}"#.utf8))
        #expect(Set(redactedJSON.hiddenValues) == ["json-1", "json-2"])

        let form = Data("user=ann&pass_phrase=form-1".utf8)
        let redaction = Redaction.default.redacting(parameters: "pass_phrase")
        let redactedForm = redaction.redact(headers: ["Content-Type": "application/x-www-form-urlencoded"], body: form)
        #expect(redactedForm.body == Data("user=ann&pass_phrase=***".utf8))
        #expect(redactedForm.hiddenValues == ["form-1"])
        // Without a Content-Type, by its look.
        #expect(redaction.redact(body: form).body == Data("user=ann&pass_phrase=***".utf8))

        let text = Data("password=plain-1".utf8)
        let redactedText = Redaction.default.redact(headers: ["Content-Type": "text/plain"], body: text)
        #expect(redactedText.body == text)
        #expect(redactedText.hiddenValues.isEmpty)
    }

    @Test("The replacement is percent-encoded in the URL only, which stays a URL")
    func replacementInURL() throws {
        var redaction = Redaction.default
        redaction.replacement = "<hidden & gone>"
        let url = try #require(URL(string: "https://api.example.com/a?token=t-1&b=2"))
        let redacted = redaction.redact(url: url, headers: ["Authorization": "Bearer t-2"], body: Data(#"{"token": "t-3"}"#.utf8))
        let text = try #require(redacted.url)
        #expect(text == "https://api.example.com/a?token=%3Chidden%20%26%20gone%3E&b=2")
        let parsed = try #require(URLComponents(string: text))
        #expect(parsed.queryItems?.first { $0.name == "token" }?.value == "<hidden & gone>")
        #expect(redacted.headers["Authorization"] == "Bearer <hidden & gone>")
        #expect(redacted.body == Data(#"{"token": "<hidden & gone>"}"#.utf8))
    }

    @Test("A redaction that hides nothing returns the parts as they are")
    func disabled() throws {
        let url = try #require(URL(string: "https://u:p@api.example.com/a?token=t"))
        let headers = ["Authorization": "Bearer t", "Location": "/b?token=t"]
        let body = Data(#"{"password": "p"}"#.utf8)
        let redacted = Redaction.disabled.redact(url: url, headers: headers, body: body)
        #expect(redacted.url == url.absoluteString)
        #expect(redacted.headers == headers)
        #expect(redacted.body == body)
        #expect(redacted.hiddenValues.isEmpty)
        #expect(Redaction.default.redact() == Redaction.RedactedMessage(url: nil, headers: [:], body: nil, hiddenValues: []))
    }
}
