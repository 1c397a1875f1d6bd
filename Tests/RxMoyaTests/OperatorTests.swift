#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxMoya
import RxSwift
import Testing

/// The person of the operators' JSON.
private struct Person: Decodable, Equatable {
    let name: String
    let id: Int
}

@Suite("Single and Observable operators")
struct OperatorTests {
    let server: TestServer
    var base: URL { server.baseURL }
    init() async throws { server = try await TestServer.start() }

    static let json = #"{"user": {"name": "moya", "id": 7}}"#

    /// A `Single` of a stubbed response: it has its result inside `subscribe`.
    func stubbed(_ body: String = json, statusCode: Int = 200) -> Single<Moya.Response> {
        stubbingProvider(statusCode: statusCode).rx.request(Remote(base, "/echo", sampleData: Data(body.utf8)))
    }

    /// What `single` emits, when subscribed to: its value, or its error as a `MoyaError`.
    func outcome<Value>(_ single: Single<Value>) -> Result<Value, MoyaError>? {
        let recorder = Recorder<Value>()
        _ = single.asObservable().subscribe(recorder)
        switch recorder.events.first {
        case .next(let value)?:
            return recorder.isCompleted ? .success(value) : nil
        case .error(let error as MoyaError)?:
            return .failure(error)
        default:
            return nil
        }
    }

    /// What `observable` emits: its values and how it ended.
    func outcome<Value>(_ observable: Observable<Value>) -> (values: [Value], error: MoyaError?) {
        let recorder = Recorder<Value>()
        _ = observable.subscribe(recorder)
        #expect(recorder.isTerminated)
        return (recorder.values, recorder.moyaError)
    }

    @Test("Single status filters pass accepted codes and fail others with .statusCode")
    func singleFilters() {
        #expect(outcome(stubbed(statusCode: 204).filterSuccessfulStatusCodes())?.value?.statusCode == 204)
        #expect(outcome(stubbed(statusCode: 304).filterSuccessfulStatusCodes())?.error?.isStatusCodeError == true)
        #expect(outcome(stubbed(statusCode: 304).filterSuccessfulStatusAndRedirectCodes())?.value?.statusCode == 304)
        #expect(outcome(stubbed(statusCode: 404).filterSuccessfulStatusAndRedirectCodes())?.error?.response?.statusCode == 404)
        #expect(outcome(stubbed(statusCode: 404).filter(statusCode: 404))?.value?.statusCode == 404)
        #expect(outcome(stubbed(statusCode: 200).filter(statusCode: 404))?.error?.isStatusCodeError == true)
        #expect(outcome(stubbed(statusCode: 404).filter(statusCodes: 200..<300))?.error?.response?.statusCode == 404)
        #expect(outcome(stubbed(statusCode: 404).filter(statusCodes: 400...))?.value?.statusCode == 404)
    }

    @Test("Single mapJSON, mapString and map decode the body")
    func singleMapping() {
        let object = outcome(stubbed().mapJSON())?.value as? [String: Any]
        #expect((object?["user"] as? [String: Any])?["id"] as? Int == 7)
        #expect(outcome(stubbed().mapString())?.value == Self.json)
        #expect(outcome(stubbed().mapString(atKeyPath: "user.name"))?.value == "moya")
        #expect(outcome(stubbed().map(Person.self, atKeyPath: "user"))?.value == Person(name: "moya", id: 7))
        #expect(outcome(stubbed("").mapJSON(failsOnEmptyData: false))?.value is NSNull)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Snake: Decodable { let userName: String }
        #expect(outcome(stubbed(#"{"user_name": "moya"}"#).map(Snake.self, using: decoder))?.value?.userName == "moya")
    }

    @Test("Single mapping failures are the MoyaErrors Response throws")
    func singleMappingFailures() {
        guard case .jsonMapping? = outcome(stubbed("not json").mapJSON())?.error else {
            Issue.record("expected jsonMapping")
            return
        }
        guard case .jsonMapping? = outcome(stubbed("").mapJSON())?.error else {
            Issue.record("expected jsonMapping for an empty body")
            return
        }
        guard case .stringMapping? = outcome(stubbed(#"{"a": 1}"#).mapString(atKeyPath: "a"))?.error else {
            Issue.record("expected stringMapping")
            return
        }
        guard case .objectMapping(let underlying, _)? = outcome(stubbed(#"{"user": {"name": 1}}"#).map(Person.self, atKeyPath: "user"))?.error else {
            Issue.record("expected objectMapping")
            return
        }
        #expect(underlying is DecodingError)
        guard case .jsonMapping? = outcome(stubbed().map(Person.self, atKeyPath: "missing"))?.error else {
            Issue.record("expected jsonMapping for a missing key path")
            return
        }
    }

    @Test("Operators on a Single from the server")
    func singleOnServer() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: .global())
        let title = try await provider.rx.request(Remote(base, "/json")).filterSuccessfulStatusCodes().mapString(atKeyPath: "slideshow.title").value
        #expect(title == "Sample Slide Show")
        do {
            _ = try await provider.rx.request(Remote(base, "/status/404")).filterSuccessfulStatusCodes().mapJSON().value
            Issue.record("no error")
        } catch let error as MoyaError {
            #expect(error.isStatusCodeError)
            #expect(error.response?.statusCode == 404)
        }
    }

    @Test("Observable status filters pass accepted responses and fail at the first other one")
    func observableFilters() {
        let responses = Observable.concat(
            stubbed(statusCode: 200).asObservable(), stubbed(statusCode: 302).asObservable(), stubbed(statusCode: 500).asObservable())
        let successful = outcome(responses.filterSuccessfulStatusCodes())
        #expect(successful.values.map(\.statusCode) == [200])
        #expect(successful.error?.response?.statusCode == 302)
        let redirects = outcome(responses.filterSuccessfulStatusAndRedirectCodes())
        #expect(redirects.values.map(\.statusCode) == [200, 302])
        #expect(redirects.error?.response?.statusCode == 500)
        let ranged = outcome(responses.filter(statusCodes: 200..<500))
        #expect(ranged.values.map(\.statusCode) == [200, 302])
        #expect(ranged.error?.isStatusCodeError == true)
        let single = outcome(responses.filter(statusCode: 200))
        #expect(single.values.map(\.statusCode) == [200])
        #expect(single.error?.response?.statusCode == 302)
        let all = outcome(responses.filter(statusCodes: 100...))
        #expect(all.values.count == 3)
        #expect(all.error == nil)
    }

    @Test("Observable mapJSON, mapString and map decode each body")
    func observableMapping() {
        let responses = Observable.concat(stubbed().asObservable(), stubbed(#"{"user": {"name": "rx", "id": 8}}"#).asObservable())
        let users = outcome(responses.map(Person.self, atKeyPath: "user"))
        #expect(users.values == [Person(name: "moya", id: 7), Person(name: "rx", id: 8)])
        #expect(users.error == nil)
        #expect(outcome(responses.mapString(atKeyPath: "user.name")).values == ["moya", "rx"])
        #expect(outcome(responses.mapString()).values.first == Self.json)
        let objects = outcome(responses.mapJSON()).values.compactMap { ($0 as? [String: Any])?["user"] as? [String: Any] }
        #expect(objects.compactMap { $0["id"] as? Int } == [7, 8])
        #expect(outcome(stubbed("").asObservable().mapJSON(failsOnEmptyData: false)).values.first is NSNull)
    }

    @Test("Observable mapping failures are the MoyaErrors Response throws")
    func observableMappingFailures() {
        let invalid = outcome(stubbed("not json").asObservable().mapJSON())
        #expect(invalid.values.isEmpty)
        guard case .jsonMapping? = invalid.error else {
            Issue.record("expected jsonMapping, got \(invalid)")
            return
        }
        guard case .stringMapping? = outcome(stubbed(#"{"a": 1}"#).asObservable().mapString(atKeyPath: "a")).error else {
            Issue.record("expected stringMapping")
            return
        }
        let decoded = outcome(
            Observable.concat(stubbed().asObservable(), stubbed(#"{"user": {"name": "rx"}}"#).asObservable()).map(Person.self, atKeyPath: "user"))
        #expect(decoded.values == [Person(name: "moya", id: 7)])
        guard case .objectMapping? = decoded.error else {
            Issue.record("expected objectMapping, got \(decoded)")
            return
        }
    }

    @Test("Operators on an Observable from the server")
    func observableOnServer() async throws {
        let provider = MoyaProvider<Remote>(callbackQueue: .global())
        let methods = try await Observable.merge(
            provider.rx.request(Remote(base, "/echo")).asObservable(),
            provider.rx.request(Remote(base, "/echo")).asObservable()
        )
        .filterSuccessfulStatusCodes()
        .mapString(atKeyPath: "method")
        .toArray()
        .value
        #expect(methods == ["GET", "GET"])
    }
}

extension Result {
    fileprivate var value: Success? { try? get() }
}
#endif
