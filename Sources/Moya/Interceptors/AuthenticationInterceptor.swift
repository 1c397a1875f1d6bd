import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Attaches a credential to every request and refreshes it when it expires or the server
/// refuses it (a 401 by default), once for all requests in flight.
///
/// - Before each attempt the credential is applied; when it ``AuthenticationCredential/requiresRefresh``,
///   it is refreshed first.
/// - When a response says the credential was refused and the request carried the current
///   credential, one refresh starts. Every other request that needs the credential meanwhile
///   (to send, or because it got refused too) waits for that refresh, then goes out again with
///   the new credential. A request refused with an older credential is simply sent again.
/// - When the refresh throws, every waiting request fails with
///   ``AuthenticationError/refreshFailed(_:)``, and so does every later one until you set
///   ``credential`` again. When refreshed credentials keep being refused, more often than
///   ``RefreshWindow`` allows, requests fail with ``AuthenticationError/excessiveRefresh``.
///
/// Give one instance to the provider (or share it between providers): the credential and the
/// refresh are shared by every request that goes through it.
///
/// ```swift
/// let auth = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: storedCredential)
/// let provider = MoyaProvider<MyAPI>(interceptors: [auth])
/// ```
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor {
    /// The credential type.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes may happen within a time span before the interceptor concludes that
    /// refreshing does not help.
    public struct RefreshWindow: Sendable {
        /// The span, in seconds.
        public let interval: TimeInterval
        /// The most refreshes within it.
        public let maximumAttempts: Int

        /// Creates a window. Default: at most 2 refreshes in 30 seconds.
        public init(interval: TimeInterval = 30, maximumAttempts: Int = 2) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Credential, any Error>
    }

    private struct State {
        var credential: Credential?
        var failure: AuthenticationError?
        var isRefreshing = false
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var refreshDates: [Date] = []
    }

    /// Attaches and refreshes the credential.
    public let authenticator: AuthenticatorType
    /// The limit on refreshes.
    public let refreshWindow: RefreshWindow
    private let state: Protected<State>

    /// Creates an interceptor.
    ///
    /// - Parameters:
    ///   - authenticator: Attaches and refreshes the credential.
    ///   - credential:    The credential to start with; requests fail with
    ///                    ``AuthenticationError/missingCredential`` until one is set.
    ///   - refreshWindow: The limit on refreshes.
    public init(authenticator: AuthenticatorType, credential: Credential? = nil, refreshWindow: RefreshWindow = RefreshWindow()) {
        self.authenticator = authenticator
        self.refreshWindow = refreshWindow
        self.state = Protected(State(credential: credential))
    }

    /// The current credential. Setting it (for example after the user signs in again) also
    /// clears an earlier refresh failure.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set {
            state.withLock {
                $0.credential = newValue
                $0.failure = nil
            }
        }
    }

    // MARK: - RequestInterceptor

    /// Applies the current credential, refreshing it first when it requires a refresh or a
    /// refresh is under way.
    public func adapt(_ request: URLRequest, retryCount: Int) async throws -> URLRequest {
        let credential = try await usableCredential()
        var request = request
        authenticator.apply(credential, to: &request)
        return request
    }

    /// Retries a request the server refused after refreshing the credential (or right away
    /// when it already has been refreshed since the request went out).
    public func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        let httpResponse: HTTPURLResponse?
        switch result {
        case .success(let response): httpResponse = response.response
        case .failure(let error): httpResponse = error.response?.response
        }
        guard let httpResponse, authenticator.didRequest(request, with: httpResponse) else {
            return .doNotRetry
        }
        do {
            _ = try await credentialAfterRefusal(of: request)
            return .retry
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    // MARK: - Credential state

    private enum Next {
        case use(Credential)
        case wait(startRefreshWith: Credential?)
        case fail(any Error)
    }

    /// The credential to send with, waiting for a refresh when one is needed or running.
    private func usableCredential() async throws -> Credential {
        let next: Next = state.withLock { state in
            if let failure = state.failure { return .fail(failure) }
            guard let credential = state.credential else { return .fail(AuthenticationError.missingCredential) }
            if state.isRefreshing { return .wait(startRefreshWith: nil) }
            if credential.requiresRefresh { return beginRefresh(&state, from: credential) }
            return .use(credential)
        }
        return try await resolve(next)
    }

    /// The credential to retry a refused request with: the current one when the request used an
    /// older one, otherwise the result of a (shared) refresh.
    private func credentialAfterRefusal(of request: URLRequest) async throws -> Credential {
        let next: Next = state.withLock { state in
            if let failure = state.failure { return .fail(failure) }
            guard let credential = state.credential else { return .fail(AuthenticationError.missingCredential) }
            if state.isRefreshing { return .wait(startRefreshWith: nil) }
            if !authenticator.isRequest(request, authenticatedWith: credential) { return .use(credential) }
            return beginRefresh(&state, from: credential)
        }
        return try await resolve(next)
    }

    /// Marks a refresh as started, unless the window forbids it. Called with the lock held.
    private func beginRefresh(_ state: inout State, from credential: Credential) -> Next {
        let now = Date()
        state.refreshDates.removeAll { now.timeIntervalSince($0) > refreshWindow.interval }
        guard state.refreshDates.count < refreshWindow.maximumAttempts else {
            return .fail(AuthenticationError.excessiveRefresh)
        }
        state.refreshDates.append(now)
        state.isRefreshing = true
        return .wait(startRefreshWith: credential)
    }

    private func resolve(_ next: Next) async throws -> Credential {
        switch next {
        case .use(let credential):
            return credential
        case .fail(let error):
            throw error
        case .wait(let refreshFrom):
            if let refreshFrom {
                startRefresh(from: refreshFrom)
            }
            return try await waitForRefresh()
        }
    }

    private func startRefresh(from credential: Credential) {
        let authenticator = self.authenticator
        _Concurrency.Task { [self] in
            do {
                let refreshed = try await authenticator.refresh(credential)
                finishRefresh(.success(refreshed))
            } catch {
                finishRefresh(.failure(AuthenticationError.refreshFailed(error)))
            }
        }
    }

    private func finishRefresh(_ result: Result<Credential, AuthenticationError>) {
        let waiters: [Waiter] = state.withLock { state in
            state.isRefreshing = false
            switch result {
            case .success(let credential): state.credential = credential
            case .failure(let error): state.failure = error
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.continuation.resume(with: result.mapError { $0 as any Error })
        }
    }

    /// Waits for the refresh under way. Cancelling the waiting task fails only this wait.
    private func waitForRefresh() async throws -> Credential {
        let id: UInt64 = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Credential, any Error>) in
                let outcome: Result<Credential, any Error>? = state.withLock { state in
                    if _Concurrency.Task.isCancelled { return .failure(CancellationError()) }
                    guard state.isRefreshing else {
                        // The refresh ended between deciding to wait and getting here.
                        if let failure = state.failure { return .failure(failure) }
                        if let credential = state.credential { return .success(credential) }
                        return .failure(AuthenticationError.missingCredential)
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}

/// The retries of an ``AuthenticationInterceptor`` answer the client's own stale credential,
/// once per request, not a failing upstream: they do not draw from the retry budget.
extension AuthenticationInterceptor: RetryBudgetExempt {}
