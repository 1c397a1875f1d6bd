import Foundation

/// A session's parts send a hedged request's copies, each as an exchange of its own.
extension ExchangeParts: HedgedExchange.Sender {
    func sendCopy(_ request: TransportRequest, progress: TransportProgressHandler?, owner: any TransportOwner) {
        TransportExchange.start(request, parts: self, progress: progress, owner: owner)
    }
}
