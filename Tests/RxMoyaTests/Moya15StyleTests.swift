#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxMoya
import RxSwift
import Testing

// Code written as Moya 15's RxSwift guide shows it, run against the test server: it compiles
// and behaves unchanged. Only the providers are set up for the tests (the test server's routes,
// a callback queue, since the main queue is not serviced here).

/// A target as Moya 15's guides write one.
enum GitHub: TargetType {
    case zen
    case userProfile(String)
    case download
    case events
    case feed
    case logs
    case notifications

    var baseURL: URL { URL(string: "https://api.github.com")! }

    var path: String {
        switch self {
        case .zen: return "/zen"
        case .userProfile(let name): return "/users/\(name)"
        case .download: return "/archive.zip"
        case .events, .notifications: return "/notifications/stream"
        case .feed: return "/feed"
        case .logs: return "/logs"
        }
    }

    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }

    var sampleData: Data {
        switch self {
        case .userProfile(let name): return Data(#"{"login": "\#(name)"}"#.utf8)
        default: return Data("Half measures are as bad as nothing at all.".utf8)
        }
    }
}

/// The user the guides decode.
struct User: Decodable {
    let login: String
}

@Suite("Code written for Moya 15's RxMoya")
struct Moya15StyleTests {
    let server: TestServer
    let disposeBag = DisposeBag()
    init() async throws { server = try await TestServer.start() }

    /// A provider that sends the `GitHub` targets to routes of the test server.
    func serverProvider() -> MoyaProvider<GitHub> {
        let base = server.baseURL.absoluteString
        return MoyaProvider<GitHub>(
            endpointClosure: { target in
                let path: String
                switch target {
                case .userProfile("missing"): path = "/status/404"
                case .download: path = "/bytes/4000?chunk=1000&interval_ms=20&length=true"
                default: path = "/echo"
                }
                return Endpoint(
                    url: base + path, sampleResponseClosure: { .networkResponse(200, target.sampleData) }, method: target.method,
                    task: target.task, httpHeaderFields: target.headers)
            },
            callbackQueue: .global()
        )
    }

    /// A provider that answers with the targets' sample data, as Moya 15's tests did.
    func stubbingProvider() -> MoyaProvider<GitHub> {
        MoyaProvider<GitHub>(stubClosure: MoyaProvider.immediatelyStub, callbackQueue: .global())
    }

    @Test("subscribe with a switch over the Single's events: success")
    func success() async throws {
        let provider = serverProvider()
        let seen = Locked<[String]>([])

        provider.rx.request(.zen).subscribe { event in
            switch event {
            case .success(let response):
                let path = (try? response.mapString(atKeyPath: "path")) ?? "?"
                seen.update { $0.append("\(response.statusCode) \(path)") }
            case .failure(let error):
                seen.update { $0.append("error \(error)") }
            }
        }.disposed(by: disposeBag)

        #expect(await eventually { !seen.value.isEmpty })
        #expect(seen.value == ["200 /echo"])
    }

    @Test("subscribe with a switch over the Single's events: failure")
    func failure() async throws {
        let provider = serverProvider()
        let seen = Locked<[Int?]>([])

        provider.rx.request(.userProfile("missing"))
            .filterSuccessfulStatusCodes()
            .subscribe { event in
                switch event {
                case .success:
                    seen.update { $0.append(nil) }
                case .failure(let error):
                    let moyaError = error as? MoyaError
                    seen.update { $0.append(moyaError?.response?.statusCode) }
                }
            }.disposed(by: disposeBag)

        #expect(await eventually { !seen.value.isEmpty })
        #expect(seen.value == [404])
    }

    @Test("requestWithProgress with a switch over the Observable's events")
    func progress() async throws {
        let provider = serverProvider()
        let progressValues = Locked<[Double]>([])
        let responses = Locked<[Moya.Response]>([])
        let completed = Locked(false)

        provider.rx.requestWithProgress(.download).subscribe { event in
            switch event {
            case .next(let progressResponse):
                if let response = progressResponse.response {
                    responses.update { $0.append(response) }
                } else {
                    progressValues.update { $0.append(progressResponse.progress) }
                }
            case .error(let error):
                Issue.record("unexpected \(error)")
            default:
                completed.update { $0 = true }
            }
        }.disposed(by: disposeBag)

        #expect(await eventually { completed.value })
        #expect(responses.value.map(\.data.count) == [4000])
        #expect(!progressValues.value.isEmpty)
        #expect(progressValues.value.allSatisfy { $0 > 0 && $0 <= 1 })
    }

    @Test("filterSuccessfulStatusCodes().map(User.self) and mapJSON() on stubs")
    func chains() async throws {
        let provider = stubbingProvider()
        let logins = Locked<[String]>([])
        let objects = Locked<[String]>([])

        provider.rx.request(.userProfile("ashfurrow"))
            .filterSuccessfulStatusCodes()
            .map(User.self)
            .subscribe(
                onSuccess: { user in
                    logins.update { $0.append(user.login) }
                },
                onFailure: { error in
                    logins.update { $0.append("error \(error)") }
                }
            )
            .disposed(by: disposeBag)

        provider.rx.request(.userProfile("moya"))
            .filterSuccessfulStatusCodes()
            .mapJSON()
            .subscribe(onSuccess: { json in
                let login = (json as? [String: Any])?["login"] as? String
                objects.update { $0.append(login ?? "?") }
            })
            .disposed(by: disposeBag)

        #expect(await eventually { !logins.value.isEmpty && !objects.value.isEmpty })
        #expect(logins.value == ["ashfurrow"])
        #expect(objects.value == ["moya"])
    }

    @Test("Observable chains, flatMap and the progress operators")
    func observableChains() async throws {
        let stubs = stubbingProvider()
        let provider = serverProvider()
        let seen = Locked<[String]>([])

        stubs.rx.request(.userProfile("moya"))
            .map(User.self)
            .flatMap { user in provider.rx.request(.userProfile(user.login)) }
            .asObservable()
            .filterSuccessfulStatusAndRedirectCodes()
            .mapString(atKeyPath: "method")
            .subscribe(onNext: { method in seen.update { $0.append(method) } })
            .disposed(by: disposeBag)

        provider.rx.requestWithProgress(.download)
            .filterCompleted()
            .map { $0.data.count }
            .subscribe(onNext: { count in seen.update { $0.append("\(count) bytes") } })
            .disposed(by: disposeBag)

        #expect(await eventually { seen.value.count == 2 })
        #expect(Set(seen.value) == ["GET", "4000 bytes"])
    }
}
#endif
