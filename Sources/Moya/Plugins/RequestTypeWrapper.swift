import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Credentials a plugin attached to one request with `RequestType.authenticate`, read by the
/// transport when the server answers with an authentication challenge.
final class RequestCredentialStore: Sendable {
    private let storage = Protected<URLCredential?>(nil)

    var credential: URLCredential? {
        get { storage.current }
        set { storage.withLock { $0 = newValue } }
    }
}

/// What plugins receive in `willSend`: the prepared request, the session's headers, and a way to
/// attach credentials, with no transport types in sight.
struct RequestTypeWrapper: RequestType {
    let request: URLRequest?
    let sessionHeaders: [String: String]
    let credentials: RequestCredentialStore

    func authenticate(username: String, password: String, persistence: URLCredential.Persistence) -> RequestTypeWrapper {
        authenticate(with: URLCredential(user: username, password: password, persistence: persistence))
    }

    func authenticate(with credential: URLCredential) -> RequestTypeWrapper {
        credentials.credential = credential
        return self
    }

    func cURLDescription(calling handler: @escaping (String) -> Void) -> RequestTypeWrapper {
        handler(CURLCommand.describe(request: request, sessionHeaders: sessionHeaders, credential: credentials.credential))
        return self
    }
}
