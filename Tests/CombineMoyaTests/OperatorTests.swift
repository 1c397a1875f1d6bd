import CombineMoya
import Foundation
import Moya
import MoyaTestServer
import Testing

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

@Suite("Publisher operators")
struct OperatorTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    /// A publisher of a stub that completes inside `request`, so that it delivers synchronously.
    func stubbed(_ json: String, statusCode: Int = 200) -> AnyPublisher<Moya.Response, MoyaError> {
        stubbingProvider(statusCode: statusCode).requestPublisher(Remote(base, "/echo", sampleData: Data(json.utf8)))
    }

    func collect<Value>(_ publisher: AnyPublisher<Value, MoyaError>) -> [Event<Value>] {
        let subscriber = TestSubscriber<Value>(demand: .unlimited)
        publisher.subscribe(subscriber)
        return subscriber.events
    }

    @Test("Status filters pass accepted codes and fail others with .statusCode")
    func filters() {
        #expect(collect(stubbed("{}", statusCode: 204).filterSuccessfulStatusCodes()).first?.value?.statusCode == 204)
        #expect(collect(stubbed("{}", statusCode: 304).filterSuccessfulStatusCodes()).first?.error?.isStatusCodeError == true)
        #expect(collect(stubbed("{}", statusCode: 304).filterSuccessfulStatusAndRedirectCodes()).first?.value?.statusCode == 304)
        #expect(collect(stubbed("{}", statusCode: 404).filter(statusCode: 404)).first?.value?.statusCode == 404)
        #expect(collect(stubbed("{}", statusCode: 404).filter(statusCodes: 200..<300)).first?.error?.response?.statusCode == 404)
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
        guard case .finished = users.last else {
            Issue.record("unexpected \(users)")
            return
        }
    }

    @Test("Mapping failures are MoyaErrors: jsonMapping, stringMapping, objectMapping")
    func mappingFailures() {
        guard case .jsonMapping? = collect(stubbed("not json").mapJSON()).first?.error else {
            Issue.record("expected jsonMapping")
            return
        }
        guard case .stringMapping? = collect(stubbed(#"{"a": 1}"#).mapString(atKeyPath: "a")).first?.error else {
            Issue.record("expected stringMapping")
            return
        }
        guard case .objectMapping(let underlying, _)? = collect(stubbed(#"{"a": 1}"#).map(String.self, atKeyPath: "a")).first?.error else {
            Issue.record("expected objectMapping")
            return
        }
        #expect(underlying is DecodingError)
        // An empty body is NSNull when allowed.
        #expect(collect(stubbed("").mapJSON(failsOnEmptyData: false)).first?.value is NSNull)
    }

    @Test("requestWithProgressPublisher: progress events, the completed response, then finished")
    func progressPublisher() async throws {
        let provider = MoyaProvider<Remote>()
        let subscriber = TestSubscriber<ProgressResponse>(demand: .unlimited)
        provider.requestWithProgressPublisher(Remote.bytes(base, 4000, chunk: 1000), callbackQueue: .global()).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        let values = subscriber.values
        #expect(values.count >= 2)
        #expect(values.map(\.completed) == Array(repeating: false, count: values.count - 1) + [true])
        #expect(values.last?.response?.data.count == 4000)
        #expect(values.allSatisfy { $0.progressObject != nil })
        guard case .finished = subscriber.events.last else {
            Issue.record("unexpected \(subscriber.events)")
            return
        }
    }

    @Test("filterCompleted publishes the response; filterProgress the fractions before it")
    func progressOperators() async throws {
        let provider = MoyaProvider<Remote>()
        let target = Remote.bytes(base, 4000, chunk: 1000)
        let completed = TestSubscriber<Moya.Response>(demand: .unlimited)
        provider.requestWithProgressPublisher(target, callbackQueue: .global()).filterCompleted().subscribe(completed)
        let fractions = TestSubscriber<Double>(demand: .unlimited)
        provider.requestWithProgressPublisher(target, callbackQueue: .global()).filterProgress().subscribe(fractions)
        #expect(await eventually { completed.isComplete && fractions.isComplete })
        #expect(completed.values.count == 1)
        #expect(completed.values.first?.data.count == 4000)
        let values = fractions.values
        #expect(!values.isEmpty)
        #expect(values.allSatisfy { $0 > 0 && $0 <= 1 }, "\(values)")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(values)")
    }

    @Test("A failing progress publisher fails with the request's error")
    func progressFailure() async throws {
        let provider = MoyaProvider<Remote>()
        let subscriber = TestSubscriber<ProgressResponse>(demand: .unlimited)
        provider.requestWithProgressPublisher(Remote(base, "/status/500", validationType: .successCodes), callbackQueue: .global()).subscribe(subscriber)
        #expect(await eventually { subscriber.isComplete })
        #expect(subscriber.events.last?.error?.response?.statusCode == 500)
        #expect(subscriber.values.allSatisfy { !$0.completed })
    }
}
