#if RxMoya
import Foundation
import Moya
import RxMoya
import RxSwift

// The Swift examples of the RxSwift article and of RxMoya's documentation comments, word for
// word, each in a function of its own as the documentation's example extractor compiles them
// (`_ = name` for a value an example does not use again, as the extractor adds). They only
// need to compile: they are never run.

/// The target the documentation's examples assume.
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

/// The user the documentation's examples decode.
struct User: Decodable {
    let login: String
}

// MARK: - The article

private func articleRequest(_ provider: MoyaProvider<GitHub>) async throws {
    let disposeBag = DisposeBag()

    provider.rx.request(.zen, callbackQueue: .global())
        .subscribe { event in
            switch event {
            case .success(let response):
                print(String(decoding: response.data, as: UTF8.self))
            case .failure(let error):
                print("The request failed: \(error)")
            }
        }
        .disposed(by: disposeBag)
}

private func articleAwait(_ provider: MoyaProvider<GitHub>) async throws {
    let response = try await provider.rx.request(.zen, callbackQueue: .global()).value
    print(response.statusCode)
}

private func articleOperators(_ provider: MoyaProvider<GitHub>) async throws {
    let disposeBag = DisposeBag()

    provider.rx.request(.userProfile("ashfurrow"), callbackQueue: .global())
        .filterSuccessfulStatusCodes()
        .map(User.self)
        .subscribe(
            onSuccess: { user in print(user.login) },
            onFailure: { error in print(error) }
        )
        .disposed(by: disposeBag)
}

private func articleProgress(_ provider: MoyaProvider<GitHub>) async throws {
    let disposeBag = DisposeBag()

    provider.rx.requestWithProgress(.download, callbackQueue: .global())
        .subscribe(onNext: { event in
            if let response = event.response {
                print("Downloaded \(response.data.count) bytes")
            } else {
                print("\(Int(event.progress * 100)) %")
            }
        })
        .disposed(by: disposeBag)

    provider.rx.requestWithProgress(.download, callbackQueue: .global())
        .filterProgress()
        .subscribe(onNext: { fraction in print(fraction) })
        .disposed(by: disposeBag)
}

private func articleCancelling(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.request(.zen, callbackQueue: .global())
        .subscribe(onSuccess: { response in print(response.statusCode) })

    // The user left the screen: the request is cancelled if it is still running.
    disposable.dispose()
}

private func articleStreams(_ provider: MoyaProvider<GitHub>) async throws {
    let disposeBag = DisposeBag()

    provider.rx.stream(.download)
        .subscribe(
            onNext: { chunk in print("\(chunk.count) bytes") },
            onError: { error in print(error) },
            onCompleted: { print("done") }
        )
        .disposed(by: disposeBag)

    provider.rx.events(.notifications)
        .subscribe(onNext: { event in print(event.event ?? "message", event.data) })
        .disposed(by: disposeBag)
}

// MARK: - The documentation comments

private func commentRequest(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.request(.zen, callbackQueue: .global())
        .mapString()
        .subscribe(onSuccess: { print($0) }, onFailure: { print($0) })
    _ = disposable
}

private func commentRequestWithProgress(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.requestWithProgress(.download, callbackQueue: .global())
        .subscribe(onNext: { event in
            if let response = event.response {
                print("done: \(response.data.count) bytes")
            } else {
                print("progress: \(event.progress)")
            }
        })
    _ = disposable
}

private func commentSingleFilter(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.request(.userProfile("moya"))
        .filterSuccessfulStatusCodes()
        .map(User.self)
        .subscribe(onSuccess: { print($0.login) }, onFailure: { print($0) })
    _ = disposable
}

private func commentObservableFilter(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.request(.userProfile("moya"))
        .asObservable()
        .filterSuccessfulStatusCodes()
        .map(User.self)
        .subscribe(onNext: { print($0.login) }, onError: { print($0) })
    _ = disposable
}

private func commentFilterCompleted(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.requestWithProgress(.download, callbackQueue: .global())
        .filterCompleted()
        .subscribe(onNext: { print("\($0.data.count) bytes") })
    _ = disposable
}

private func commentStream(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.stream(.download)
        .subscribe(onNext: { print("\($0.count) bytes") }, onError: { print($0) })
    _ = disposable
}

private func commentEvents(_ provider: MoyaProvider<GitHub>) async throws {
    let disposable = provider.rx.events(.notifications, reconnection: .never)
        .subscribe(onNext: { print($0.event ?? "message", $0.data) })
    _ = disposable
}
#endif
