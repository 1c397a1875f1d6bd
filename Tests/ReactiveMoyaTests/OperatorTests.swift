#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

@Suite("SignalProducer operators")
struct OperatorTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    /// A producer of a stubbed response: its events are all sent inside `start`.
    func stubbed(_ body: String, statusCode: Int = 200) -> SignalProducer<Moya.Response, MoyaError> {
        stubbingProvider(statusCode: statusCode).reactive.request(Remote(base, "/echo", sampleData: Data(body.utf8)))
    }

    /// What `producer` sends, all of it sent inside `start`.
    func collect<Value>(_ producer: SignalProducer<Value, MoyaError>) -> [Signal<Value, MoyaError>.Event] {
        let recorder = Recorder(producer)
        #expect(recorder.isTerminated, "a stubbed producer sends everything inside start")
        return recorder.events
    }

    @Test("Status filters pass accepted codes and fail others with .statusCode")
    func filters() {
        #expect(collect(stubbed("{}", statusCode: 204).filterSuccessfulStatusCodes()).first?.value?.statusCode == 204)
        #expect(collect(stubbed("{}", statusCode: 304).filterSuccessfulStatusCodes()).first?.error?.isStatusCodeError == true)
        #expect(collect(stubbed("{}", statusCode: 304).filterSuccessfulStatusAndRedirectCodes()).first?.value?.statusCode == 304)
        #expect(collect(stubbed("{}", statusCode: 404).filterSuccessfulStatusAndRedirectCodes()).first?.error?.response?.statusCode == 404)
        #expect(collect(stubbed("{}", statusCode: 404).filter(statusCode: 404)).first?.value?.statusCode == 404)
        #expect(collect(stubbed("{}", statusCode: 200).filter(statusCode: 404)).first?.error?.isStatusCodeError == true)
        #expect(collect(stubbed("{}", statusCode: 404).filter(statusCodes: 200..<300)).first?.error?.response?.statusCode == 404)
        #expect(collect(stubbed("{}", statusCode: 250).filter(statusCodes: 200...)).first?.value?.statusCode == 250)
        let completed = collect(stubbed("{}", statusCode: 200).filterSuccessfulStatusCodes())
        #expect(completed.count == 2 && completed.last?.isCompleted == true, "\(completed)")
    }

    @Test("mapJSON, mapString and map decode the body")
    func mapping() {
        let json = #"{"user": {"name": "moya", "id": 7}}"#
        let object = collect(stubbed(json).mapJSON()).first?.value as? [String: Any]
        #expect((object?["user"] as? [String: Any])?["id"] as? Int == 7)
        #expect(collect(stubbed(json).mapString()).first?.value == json)
        #expect(collect(stubbed(json).mapString(atKeyPath: "user.name")).first?.value == "moya")

        struct User: Decodable {
            let name: String
            let id: Int
        }
        let users = collect(stubbed(json).map(User.self, atKeyPath: "user"))
        #expect(users.first?.value?.name == "moya")
        #expect(users.first?.value?.id == 7)
        #expect(users.count == 2 && users.last?.isCompleted == true, "\(users)")

        let snake = collect(stubbed(#"{"user_id": 3}"#).map(Snake.self, using: Snake.decoder))
        #expect(snake.first?.value?.userId == 3)
    }

    @Test("Mapping failures are MoyaErrors: jsonMapping, stringMapping, objectMapping")
    func mappingFailures() {
        #expect(collect(stubbed("not json").mapJSON()).first?.error?.isJSONMapping == true)
        guard case .stringMapping? = collect(stubbed(#"{"a": 1}"#).mapString(atKeyPath: "a")).first?.error else {
            Issue.record("expected stringMapping")
            return
        }
        guard case .objectMapping(let underlying, _)? = collect(stubbed(#"{"a": 1}"#).map(String.self, atKeyPath: "a")).first?.error else {
            Issue.record("expected objectMapping")
            return
        }
        #expect(underlying is DecodingError)
        // An empty body fails, unless allowed: then it is NSNull.
        #expect(collect(stubbed("").mapJSON()).first?.error?.isJSONMapping == true)
        #expect(collect(stubbed("").mapJSON(failsOnEmptyData: false)).first?.value is NSNull)
    }

    @Test("A failed request passes through the operators unchanged")
    func failurePassesThrough() async throws {
        let provider = MoyaProvider<Remote>()
        let recorder = Recorder(
            provider.reactive.request(Remote(base, "/status/503", validationType: .successCodes), callbackQueue: .global())
                .filterSuccessfulStatusCodes()
                .mapJSON())
        #expect(await eventually { recorder.isTerminated })
        #expect(recorder.error?.isStatusCodeError == true)
        #expect(recorder.error?.response?.statusCode == 503)
    }

    @Test("Operators on a real response: filter, mapJSON, map with a key path, mapString")
    func realResponses() async throws {
        let provider = MoyaProvider<Remote>()
        let json = provider.reactive.request(Remote(base, "/json"), callbackQueue: .global())

        struct Slide: Decodable {
            let title: String
        }
        let slides = Recorder(json.filterSuccessfulStatusCodes().map([Slide].self, atKeyPath: "slideshow.slides"))
        let author = Recorder(json.mapString(atKeyPath: "slideshow.author"))
        let object = Recorder(json.mapJSON())
        let missing = Recorder(provider.reactive.request(Remote(base, "/status/404"), callbackQueue: .global()).filterSuccessfulStatusCodes())
        let text = Recorder(provider.reactive.request(Remote(base, "/echo"), callbackQueue: .global()).mapString())
        #expect(await eventually { slides.isTerminated && author.isTerminated && object.isTerminated && missing.isTerminated && text.isTerminated })
        #expect(slides.values.first?.map(\.title) == ["Wake up to WonderWidgets!", "Overview"])
        #expect(slides.isCompleted)
        #expect(author.values == ["Yours Truly"])
        #expect((object.values.first as? [String: Any])?["slideshow"] != nil)
        #expect(missing.error?.response?.statusCode == 404)
        #expect(text.values.first?.contains(#""path":"/echo""#) == true, "\(text.values)")
    }
}

/// A type decoded with a decoder of its own.
struct Snake: Decodable {
    let userId: Int

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}
#endif
