from django.urls import path

from compliance import reception

urlpatterns = [
    path("", reception.reception, name="reception"),
    path("visits/<int:pk>/card.pdf", reception.visit_card, name="reception-visit-card"),
    path("bars/", reception.bars, name="reception-bars"),
    path("bars/<int:pk>/lift/", reception.bar_lift_view, name="reception-bar-lift"),
]
