#if ReactiveMoya
import Foundation
import Moya
import ReactiveMoya
import ReactiveSwift
import Testing

// The Swift examples of the ReactiveSwift documentation and of ReactiveMoya's documentation
// comments, verbatim, each in a function of its own (followed by `_ = name` for a value it does
// not use, as the documentation's example extractor adds). They run against a provider whose
// stubs answer at once, so the test can check that each example sent its requests.

/// The target of the documentation's examples.
private enum GitHub: TargetType {
    case zen
    case userProfile(String)
    case download
    case notifications

    var baseURL: URL { URL(string: "https://api.github.com")! }
    var path: String {
        switch self {
        case .zen: return "/zen"
        case .userProfile(let name): return "/users/\(name)"
        case .download: return "/archive.zip"
        case .notifications: return "/notifications/stream"
        }
    }
    var method: Moya.Method { .get }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
    var sampleData: Data {
        switch self {
        case .zen: return Data("Practicality beats purity.".utf8)
        case .userProfile(let name): return Data(#"{"login": "\#(name)"}"#.utf8)
        case .download: return Data(repeating: 7, count: 10_000)
        case .notifications: return Data("event: ping\ndata: hello\n\n".utf8)
        }
    }
}

private struct User: Decodable {
    let login: String
}

/// Sees every request of the examples.
private let examplesPlugin = ResultsPlugin()

/// The examples' provider: its stubs answer at once, on its callback queue.
private let provider = MoyaProvider<GitHub>(
    stubClosure: MoyaProvider.immediatelyStub, callbackQueue: .global(), plugins: [examplesPlugin])

// MARK: - The article

private func articleRequest() {
    let disposable = provider.reactive.request(.zen, callbackQueue: .global())
        .startWithResult { result in
            switch result {
            case .success(let response):
                print(String(decoding: response.data, as: UTF8.self))
            case .failure(let error):
                print(error)
            }
        }
    _ = disposable
}

private func articleMoya15Events() {
    provider.reactive.request(.zen).start { event in
        switch event {
        case .value(let response):
            print(response.statusCode)
        case .failed(let error):
            print(error)
        default:
            break
        }
    }
}

private func articleOperators() {
    let disposable = provider.reactive.request(.userProfile("ashfurrow"), callbackQueue: .global())
        .filterSuccessfulStatusCodes()
        .map(User.self)
        .startWithResult { result in
            switch result {
            case .success(let user):
                print(user.login)
            case .failure(.statusCode(let response)):
                print("rejected: \(response.statusCode)")
            case .failure(let error):
                print(error)
            }
        }
    _ = disposable
}

private func articleProgress() {
    let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
        .start { event in
            switch event {
            case .value(let progress) where progress.completed:
                print("done: \(progress.response?.data.count ?? 0) bytes")
            case .value(let progress):
                print("\(Int(progress.progress * 100)) %")
            case .failed(let error):
                print(error)
            case .completed, .interrupted:
                break
            }
        }
    _ = disposable
}

private func articleFilterProgress() {
    let fractions = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
        .filterProgress()
        .startWithResult { result in
            if case .success(let fraction) = result {
                print("\(Int(fraction * 100)) %")
            }
        }
    _ = fractions
}

private func articleDispose() {
    let disposable = provider.reactive.request(.download, callbackQueue: .global())
        .startWithResult { result in print(result) }

    // Later, when the download is no longer wanted:
    disposable.dispose()
}

private final class ProfileModel {
    private let (lifetime, token) = Lifetime.make()

    func load(_ name: String) {
        provider.reactive.request(.userProfile(name), callbackQueue: .global())
            .map(User.self)
            .take(during: lifetime)
            .startWithResult { result in print(result.map(\.login)) }
    }
}

private func articleStreams() {
    let download = provider.reactive.stream(.download)
        .startWithResult { result in
            switch result {
            case .success(let chunk): print("\(chunk.count) bytes")
            case .failure(let error): print(error)
            }
        }

    let notifications = provider.reactive.events(.notifications, reconnection: .never)
        .startWithResult { result in
            if case .success(let event) = result {
                print(event.event ?? "message", event.data)
            }
        }
    _ = download
    _ = notifications
}

// MARK: - Documentation comments

private func commentRequest() {
    let disposable = provider.reactive.request(.zen, callbackQueue: .global())
        .mapString()
        .startWithResult { result in print(result) }
    _ = disposable
}

private func commentRequestWithProgress() {
    let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
        .startWithResult { result in
            switch result {
            case .success(let event) where event.completed:
                print("\(event.response?.data.count ?? 0) bytes")
            case .success(let event):
                print("\(Int(event.progress * 100)) %")
            case .failure(let error):
                print(error)
            }
        }
    _ = disposable
}

private func commentMapJSON() {
    let disposable = provider.reactive.request(.userProfile("ashfurrow"), callbackQueue: .global())
        .filterSuccessfulStatusCodes()
        .mapJSON()
        .startWithResult { result in print(result) }
    _ = disposable
}

private func commentMap() {
    let disposable = provider.reactive.request(.userProfile("ashfurrow"), callbackQueue: .global())
        .map(User.self)
        .startWithResult { result in
            switch result {
            case .success(let user): print(user.login)
            case .failure(let error): print(error)
            }
        }
    _ = disposable
}

private func commentFilterCompleted() {
    let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
        .filterCompleted()
        .startWithResult { result in print(result.map(\.statusCode)) }
    _ = disposable
}

private func commentFilterProgress() {
    let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
        .filterProgress()
        .startWithResult { result in
            if case .success(let fraction) = result {
                print("\(Int(fraction * 100)) %")
            }
        }
    _ = disposable
}

private func commentStream() {
    let disposable = provider.reactive.stream(.download)
        .startWithResult { result in
            switch result {
            case .success(let chunk): print("\(chunk.count) bytes")
            case .failure(let error): print(error)
            }
        }
    _ = disposable
}

/// Returns the disposable: with the default policy, the stream reconnects until disposed of.
private func commentEvents() -> any Disposable {
    let disposable = provider.reactive.events(.notifications)
        .startWithResult { result in
            if case .success(let event) = result {
                print(event.event ?? "message", event.data)
            }
        }
    return disposable
}

@Suite("Documentation examples")
struct DocumentationExamplesTests {
    @Test("Every example compiles and sends its requests")
    func examples() async throws {
        // Each example, and how many requests it sends; they run one after another, as they
        // share the provider and its plugin.
        let examples: [(String, Int, () -> Void)] = [
            ("article: request", 1, articleRequest),
            ("article: Moya 15 events", 1, articleMoya15Events),
            ("article: operators", 1, articleOperators),
            ("article: progress", 1, articleProgress),
            ("article: filterProgress", 1, articleFilterProgress),
            ("article: streams", 2, articleStreams),
            ("comment: request", 1, commentRequest),
            ("comment: requestWithProgress", 1, commentRequestWithProgress),
            ("comment: mapJSON", 1, commentMapJSON),
            ("comment: map", 1, commentMap),
            ("comment: filterCompleted", 1, commentFilterCompleted),
            ("comment: filterProgress", 1, commentFilterProgress),
            ("comment: stream", 1, commentStream),
        ]
        for (name, requests, example) in examples {
            let before = examplesPlugin.results.count
            example()
            #expect(await eventually { examplesPlugin.results.count == before + requests }, "\(name)")
        }
        #expect(examplesPlugin.results.allSatisfy { $0.error == nil }, "\(examplesPlugin.results)")

        // The model's request runs while the model lives.
        let model = ProfileModel()
        var before = examplesPlugin.results.count
        model.load("ashfurrow")
        #expect(await eventually { examplesPlugin.results.count == before + 1 })
        withExtendedLifetime(model) {}
        #expect(examplesPlugin.results.last?.error == nil)

        // Disposed of at once: the request was prepared, then answered or cancelled. (Which
        // plugin results a stub cancelled while it answers gets is the provider's business.)
        before = examplesPlugin.prepared
        articleDispose()
        #expect(await eventually { examplesPlugin.prepared == before + 1 })

        // The default policy reconnects until the producer is disposed of: one connection will do.
        before = examplesPlugin.results.count
        let events = commentEvents()
        #expect(await eventually { examplesPlugin.results.count >= before + 1 })
        events.dispose()
    }
}
#endif
