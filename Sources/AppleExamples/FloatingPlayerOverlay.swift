// The article *The floating player*'s SwiftUI overlay. Compiled where SwiftUI exists (the Apple
// check type-checks it for iOS 17 and macOS 14); empty elsewhere. ArchitectureTests holds the
// article to the lines between the `example` markers.

#if canImport(SwiftUI)
    // example: begin floating-player-overlay
    import Gestures
    import SwiftUI

    struct FloatingPlayerOverlay<Content: View>: View {
        @State private var session: FloatingPlayerSession?
        @State private var dragging = false
        let content: Content
        let onTap: () -> Void

        init(onTap: @escaping () -> Void, @ViewBuilder content: () -> Content) {
            self.onTap = onTap
            self.content = content()
        }

        var body: some View {
            GeometryReader { proxy in
                TimelineView(.animation) { timeline in
                    let now = timeline.date.timeIntervalSinceReferenceDate
                    let frame = session?.frame(at: now) ?? .zero
                    content
                        .frame(width: frame.width, height: frame.height)
                        .position(x: frame.midX, y: frame.midY)
                }
                .gesture(
                    DragGesture(minimumDistance: 0, coordinateSpace: .local)
                        .onChanged { value in
                            let time = value.time.timeIntervalSinceReferenceDate
                            if !dragging {
                                dragging = session?.touchBegan(at: value.startLocation, time: time) ?? false
                            }
                            session?.touchMoved(to: value.location, time: time)
                        }
                        .onEnded { value in
                            let end = session?.touchEnded(
                                at: value.location, time: value.time.timeIntervalSinceReferenceDate)
                            if end == .tap { onTap() }  // for example, the circle model's tap()
                            dragging = false
                        }
                )
                .onAppear { session = FloatingPlayerSession(layout: layout(proxy)) }
                .onChange(of: proxy.size) {
                    session?.updateLayout(layout(proxy), time: Date().timeIntervalSinceReferenceDate)
                }
            }
        }

        private func layout(_ proxy: GeometryProxy) -> FloatingLayout {
            let insets = proxy.safeAreaInsets
            return FloatingLayout(
                bounds: CGRect(origin: .zero, size: proxy.size),
                safeArea: LayoutInsets(
                    top: insets.top, left: insets.leading, bottom: insets.bottom, right: insets.trailing),
                playerSize: CGSize(width: 72, height: 72))
        }
    }
// example: end floating-player-overlay
#endif
