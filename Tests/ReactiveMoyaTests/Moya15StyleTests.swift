#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveMoya
import ReactiveSwift
import Testing

// Code written as Moya 15's documentation (docs/ReactiveSwift.md) and its users wrote it,
// unchanged but for the provider's callback queue (the main queue is not serviced here), an
// endpoint closure that sends the targets to the test server, and `case .value(let response)`
// for the documentation's `case let .value(response)` (this repository's format rules; the two
// compile alike).

/// A target enum in Moya 15's style, with a fixed base URL.
enum LegacyService {
    case zen
    case showUser(id: Int)
    case slideshow
    case missing
    case download(size: Int)
}

extension LegacyService: TargetType {
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String {
        switch self {
        case .zen, .showUser: return "/echo"
        case .slideshow: return "/json"
        case .missing: return "/status/404"
        case .download(let size): return "/bytes/\(size)"
        }
    }
    var method: Moya.Method { .get }
    var task: Task {
        switch self {
        case .showUser(let id): return .requestParameters(parameters: ["id": id], encoding: URLEncoding.queryString)
        case .download: return .requestParameters(parameters: ["chunk": 1000, "interval_ms": 10, "length": "true"], encoding: URLEncoding.queryString)
        default: return .requestPlain
        }
    }
    var headers: [String: String]? { ["Content-type": "application/json"] }
    var sampleData: Data { Data(#"{"method": "GET", "path": "/echo"}"#.utf8) }
}

/// What `/echo` sends back, decoded as a Moya 15 user would decode a model.
struct EchoedUser: Decodable {
    let method: String
    let path: String
    let query: String?
}

@Suite("Moya 15 style")
struct Moya15StyleTests {
    let server: TestServer
    let provider: MoyaProvider<LegacyService>

    init() async throws {
        let server = try await TestServer.start()
        self.server = server
        provider = MoyaProvider<LegacyService>(
            endpointClosure: { (target: LegacyService) -> Endpoint in
                Endpoint(
                    url: server.baseURL.appendingPathComponent(target.path).absoluteString,
                    sampleResponseClosure: { .networkResponse(200, target.sampleData) },
                    method: target.method,
                    task: target.task,
                    httpHeaderFields: target.headers
                )
            },
            callbackQueue: DispatchQueue.global(qos: .utility)
        )
    }

    @Test("provider.reactive.request(_:).start { event in switch event { ... } }")
    func startWithEvents() async throws {
        let received = Locked<[String]>([])
        provider.reactive.request(.zen).start { event in
            switch event {
            case .value(let response):
                received.update { $0.append("value \(response.statusCode)") }
            case .failed(let error):
                received.update { $0.append("failed \(error)") }
            default:
                received.update { $0.append("end") }
            }
        }
        #expect(await eventually { received.value.count == 2 })
        #expect(received.value == ["value 200", "end"])
    }

    @Test("A failed request arrives as .failed(error), with the response of a rejected status")
    func failedEvent() async throws {
        let failure = Locked<MoyaError?>(nil)
        let values = Locked(0)
        provider.reactive.request(.missing)
            .filterSuccessfulStatusCodes()
            .start { event in
                switch event {
                case .value:
                    values.update { $0 += 1 }
                case .failed(let error):
                    failure.update { $0 = error }
                default:
                    break
                }
            }
        #expect(await eventually { failure.value != nil })
        #expect(values.value == 0)
        guard case .statusCode(let response)? = failure.value else {
            Issue.record("unexpected \(String(describing: failure.value))")
            return
        }
        #expect(response.statusCode == 404)
    }

    @Test("Chains: filterSuccessfulStatusCodes().mapJSON(), map(_:), mapString(atKeyPath:), startWithResult")
    func chains() async throws {
        let json = Locked<[String: Any]?>(nil)
        provider.reactive.request(.slideshow)
            .filterSuccessfulStatusCodes()
            .mapJSON()
            .startWithResult { result in
                switch result {
                case .success(let object):
                    json.update { $0 = object as? [String: Any] }
                case .failure:
                    json.update { $0 = [:] }
                }
            }

        let user = Locked<EchoedUser?>(nil)
        provider.reactive.request(.showUser(id: 42))
            .filterSuccessfulStatusAndRedirectCodes()
            .map(EchoedUser.self)
            .startWithResult { result in
                if case .success(let value) = result {
                    user.update { $0 = value }
                }
            }

        let author = Locked<String?>(nil)
        provider.reactive.request(.slideshow)
            .filter(statusCode: 200)
            .mapString(atKeyPath: "slideshow.author")
            .flatMapError { _ in SignalProducer<String, Never>(value: "failed") }
            .startWithValues { value in author.update { $0 = value } }

        #expect(await eventually { json.value != nil && user.value != nil && author.value != nil })
        #expect((json.value?["slideshow"] as? [String: Any])?["title"] as? String == "Sample Slide Show")
        #expect(user.value?.query == "id=42")
        #expect(author.value == "Yours Truly")
    }

    @Test("requestWithProgress, as Moya 15's documentation shows it")
    func progress() async throws {
        let lines = Locked<[String]>([])
        let done = Locked(false)
        provider.reactive.requestWithProgress(.download(size: 4000)).start { event in
            switch event {
            case .value(let progressResponse):
                if let response = progressResponse.response {
                    lines.update { $0.append("response \(response.data.count)") }
                } else {
                    lines.update { $0.append("Progress: \(progressResponse.progress)") }
                }
            case .failed(let error):
                lines.update { $0.append("failed \(error)") }
            default:
                done.update { $0 = true }
            }
        }
        #expect(await eventually { done.value })
        #expect(lines.value.last == "response 4000")
        #expect(lines.value.dropLast().allSatisfy { $0.hasPrefix("Progress: ") })
        #expect(lines.value.count >= 2)
    }

    @Test("Disposing of the subscription before the request completes cancels it")
    func disposal() async throws {
        let plugin = ResultsPlugin()
        let server = self.server
        let provider = MoyaProvider<LegacyService>(
            endpointClosure: { (target: LegacyService) -> Endpoint in
                Endpoint(
                    url: server.baseURL.appendingPathComponent("/headers-only-then-hang").absoluteString,
                    sampleResponseClosure: { .networkResponse(200, target.sampleData) },
                    method: target.method,
                    task: target.task,
                    httpHeaderFields: target.headers
                )
            },
            callbackQueue: DispatchQueue.global(qos: .utility),
            plugins: [plugin]
        )
        let values = Locked(0)
        let disposable = provider.reactive.request(.zen).startWithResult { _ in values.update { $0 += 1 } }
        try await server.waitForRequests(count: 1)
        disposable.dispose()
        #expect(await eventually { !plugin.results.isEmpty })
        #expect(plugin.results.first?.isCancelled == true)
        #expect(values.value == 0)
        #expect(disposable.isDisposed)
    }

    @Test("Operators of ReactiveSwift compose with the producers: flatMap, zip, on, retry")
    func composition() async throws {
        let provider = self.provider
        let pair = Locked<(Int, String)?>(nil)
        let log = Locked<[String]>([])
        SignalProducer.zip(
            provider.reactive.request(.zen).map { $0.statusCode },
            provider.reactive.request(.slideshow).mapString(atKeyPath: "slideshow.title")
        )
        .on(value: { _ in log.update { $0.append("zipped") } })
        .flatMap(.latest) { code, title in
            provider.reactive.request(.showUser(id: code)).map(EchoedUser.self).map { ($0.query ?? "", title) }
        }
        .retry(upTo: 1)
        .startWithResult { result in
            if case .success(let (query, title)) = result {
                pair.update { $0 = (query == "id=200" ? 200 : 0, title) }
            }
        }
        #expect(await eventually { pair.value != nil })
        #expect(pair.value?.0 == 200)
        #expect(pair.value?.1 == "Sample Slide Show")
        #expect(log.value == ["zipped"])
        #expect(server.receivedRequests.count == 3)
    }

    @Test("A stubbed provider, as in Moya 15's tests")
    func stubbed() throws {
        let stubbing = MoyaProvider<LegacyService>(stubClosure: MoyaProvider.immediatelyStub)
        var user: EchoedUser?
        var completed = false
        stubbing.reactive.request(.zen).map(EchoedUser.self).start { event in
            switch event {
            case .value(let value): user = value
            case .completed: completed = true
            default: break
            }
        }
        #expect(user?.path == "/echo")
        #expect(completed)
    }
}
#endif
