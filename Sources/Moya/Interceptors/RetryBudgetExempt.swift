import Foundation

/// An interceptor whose retries do not draw from the session's ``RetryBudget``: they are
/// bounded per request by the interceptor itself and are not caused by the upstream failing
/// (``AuthenticationInterceptor``'s retry after a credential refresh).
protocol RetryBudgetExempt {}
