import Foundation

extension Session {
    /// Asks whether a new exchange may start: `nil` admits it, and the session counts it as in
    /// flight until ``exchangeEnded()``; an error refuses it (the exchange ends at once with it).
    func admitExchange() -> (any Error)? {
        nil
    }

    /// An exchange that ``admitExchange()`` admitted has ended.
    func exchangeEnded() {}
}
